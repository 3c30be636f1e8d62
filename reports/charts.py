"""Geometry for the inline SVG charts (no JavaScript, no external files).

The templates draw what these functions compute: only numbers and fixed class names reach SVG
attributes; labels are text nodes (autoescaped).
"""

from __future__ import annotations


# Rate axes end at the first of these fractions that holds the largest rate: a 0.1 % rate fills
# its chart as a 50 % one does (the axis says which), never a 1-2 px sliver of a 0-100 % axis.
RATE_TOPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def rate_top(rate: float) -> float:
    """The top of a rate axis for a largest rate ``rate`` (a fraction)."""
    return next((t for t in RATE_TOPS if rate <= t + 1e-12), 1.0)


def count_top(n: int) -> int:
    """The top of a count axis: the first 1, 2 or 5 × 10^k that holds ``n`` (at least 1)."""
    k = 1
    while True:
        for m in (1, 2, 5):
            if n <= m * k:
                return m * k
        k *= 10


def percent(f: float) -> str:
    """A fraction as a percentage with the digits a small one needs: 0.0005 -> "0.05%",
    0.5 -> "50%", 0.123 -> "12.3%"."""
    p = f * 100
    digits = 0 if p >= 10 else 1 if p >= 1 else 2 if p >= 0.01 else 3
    text = f"{p:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + "%"


def rate_chart(points: list[dict], series: list[tuple[str, str, str]], *, total: str = "total",
               width: int = 900, height: int = 230, max_labels: int = 12) -> dict:
    """A failure-rate chart over time with the counts on an axis of their own.

    ``points``: one dict per time slot, oldest first, with ``label``, the denominator ``total``
    (runs judged) and one count per series key. ``series``: (key, css class, name). The upper
    panel draws each series' rate (count / total) as a line with a dot per slot, on a percent axis
    that ends at ``rate_top`` of the largest rate; the lower panel draws the counts as bars
    (side by side per slot) on a count axis of their own. Returns the SVG geometry."""
    pad_left, pad_right, pad_top, pad_bottom, gap = 56, 8, 8, 20, 26
    plot_w = width - pad_left - pad_right
    rate_h = round((height - pad_top - pad_bottom - gap) * 0.62)
    count_h = height - pad_top - pad_bottom - gap - rate_h
    n = len(points)
    slot = plot_w / max(n, 1)
    rates = [[(int(p.get(k) or 0) / p[total]) if p.get(total) else None for p in points] for k, _, _ in series]
    rtop = rate_top(max([r for rs in rates for r in rs if r is not None] + [0.0]))
    ctop = count_top(max([int(p.get(k) or 0) for p in points for k, _, _ in series] + [0]))
    rate_base = pad_top + rate_h
    count_base = rate_base + gap + count_h
    lines, dots, bars = [], [], []
    bar_w = max(1.0, min(18.0, slot * 0.8 / max(len(series), 1)))
    for si, (key, cls, name) in enumerate(series):
        pts = []
        for i, p in enumerate(points):
            cx = pad_left + i * slot + slot / 2
            r = rates[si][i]
            c = int(p.get(key) or 0)
            if r is not None:
                cy = rate_base - rate_h * r / rtop
                pts.append(f"{round(cx, 2)},{round(cy, 2)}")
                dots.append({"x": round(cx, 2), "y": round(cy, 2), "cls": cls,
                             "title": f"{p['label']}: {name} {percent(r)} ({c} of {p[total]} runs)"})
            if c:
                h = count_h * c / ctop
                x = cx - bar_w * len(series) / 2 + si * bar_w
                bars.append({"x": round(x, 2), "y": round(count_base - h, 2), "w": round(bar_w, 2),
                             "h": round(max(h, 1.0), 2), "cls": cls, "title": f"{p['label']}: {c} {name}"})
        if len(pts) > 1:
            lines.append({"cls": cls, "points": " ".join(pts)})
    step = max(1, -(-n // max_labels))
    labels = [{"x": round(pad_left + i * slot + slot / 2, 2), "text": str(p["label"])}
              for i, p in enumerate(points) if i % step == 0]
    rate_ticks = [{"y": round(rate_base - rate_h * f, 2), "text": percent(rtop * f)} for f in (0, 0.5, 1)]
    count_ticks = [{"y": round(count_base - count_h * f, 2), "text": str(round(ctop * f, 1)).removesuffix(".0")}
                   for f in (0, 1)]
    return {"width": width, "height": height, "left": pad_left, "right": width - pad_right,
            "rate_base": rate_base, "rate_top_y": pad_top, "count_base": count_base, "count_top_y": count_base - count_h,
            "rate_top": percent(rtop), "count_top": ctop, "lines": lines, "dots": dots, "bars": bars,
            "labels": labels, "rate_ticks": rate_ticks, "count_ticks": count_ticks,
            "legend": [(cls, name) for _, cls, name in series], "empty": n == 0}
