"""Writing report files: atomically (temporary file in the same directory, then rename), so a
reader (a browser, node_exporter) never sees half a file."""

from __future__ import annotations

from pathlib import Path


def write_atomic(path: Path, payload: bytes | str) -> Path:
    """Write ``payload`` (str as UTF-8) to ``path`` via a temporary sibling and a rename."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8", "replace")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(payload)
    tmp.replace(path)
    return path
