"""Geometry for the inline SVG charts (no JavaScript, no external files).

The templates draw what these functions compute: only numbers and fixed class names reach SVG
attributes; labels are text nodes (autoescaped).
"""

from __future__ import annotations


def stacked_bars(points: list[dict], label: str, series: list[tuple[str, str]], *,
                 width: int = 900, height: int = 180, max_labels: int = 12) -> dict:
    """A stacked bar chart: one bar per point, one segment per (key, css class) in ``series``
    (drawn bottom-up). Returns the SVG geometry: bars (x, y, w, h, class, title), axis labels."""
    pad_left, pad_bottom, pad_top = 44, 22, 8
    plot_w = width - pad_left - 4
    plot_h = height - pad_bottom - pad_top
    n = len(points)
    top = max([sum(int(p.get(k) or 0) for k, _ in series) for p in points] + [1])
    slot = plot_w / max(n, 1)
    bar_w = max(1.0, min(48.0, slot * 0.8))
    bars, labels = [], []
    step = max(1, -(-n // max_labels))
    for i, p in enumerate(points):
        x = pad_left + i * slot + (slot - bar_w) / 2
        base = 0
        parts = []
        for key, cls in series:
            v = int(p.get(key) or 0)
            parts.append(f"{v} {key}")
            if v:
                h = plot_h * v / top
                y = pad_top + plot_h * (1 - (base + v) / top)
                bars.append({"x": round(x, 2), "y": round(y, 2), "w": round(bar_w, 2), "h": round(h, 2),
                             "cls": cls, "title": f"{p[label]}: " + ", ".join(parts)})
                base += v
        if i % step == 0:
            labels.append({"x": round(x + bar_w / 2, 2), "text": str(p[label])})
    ticks = [{"y": round(pad_top + plot_h * (1 - f), 2), "text": str(round(top * f))} for f in (0, 0.5, 1)]
    return {"width": width, "height": height, "bars": bars, "labels": labels, "ticks": ticks,
            "axis_y": pad_top + plot_h, "left": pad_left, "legend": series, "empty": n == 0}
