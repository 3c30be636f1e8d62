"""The report directory's manifest, ``OUT/.groundwork-manifest.json``: a digest of what each
incrementally written file was made from (run pages, per-run texts, failing-list pages), so a
nightly rewrites only what changed. Deleting it forces a full rewrite.

Saved only when an entry changed: a nightly in which nothing changed neither renders nor writes
anything per run, and leaves the manifest as it was.

Beside it, ``OUT/.groundwork-written.json`` says which nightly (of which warehouse) the directory
holds the outputs of: written once a report is complete, removed when the next one loads the
manifest (the directory is being changed until it finishes). The next nightly, whose baseline that is, then looks only at the runs that changed
since (reports/runpage.write_texts); without it, at every run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from groundwork import __version__
from groundwork.reports.output import write_atomic
from groundwork.reports.render import TEMPLATES_DIR, rule_catalog

MANIFEST = ".groundwork-manifest.json"
WRITTEN = ".groundwork-written.json"
VERSION = 1


def digest(*parts) -> str:
    """A short digest of ``parts`` (strings, numbers, None), each told apart from the next."""
    h = hashlib.sha256()
    for p in parts:
        h.update(b"\x00" if p is None else b"\x01" + str(p).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def template_version(templates, *extra) -> str:
    """What every page made from ``templates`` (names under reports/templates) depends on besides
    its data: the templates, the rule titles a page shows, groundwork's version and ``extra``
    (e.g. the writing module's source, Paths read as text)."""
    texts = [(TEMPLATES_DIR / name).read_text(encoding="utf-8") for name in templates]
    extra = [x.read_text(encoding="utf-8") if isinstance(x, Path) else x for x in extra]
    titles = [f"{c.code}={c.title}" for c in rule_catalog().values()]
    return digest(__version__, *texts, *extra, *titles)


class Manifest(dict):
    """The manifest's entries (``pages``, ``texts``, ``lists``: file key -> digest); ``dirty``
    once one changed."""

    def __init__(self, entries: dict, written: dict | None = None):
        super().__init__(entries)
        self.dirty = False
        self.written = written   # OUT/.groundwork-written.json as loaded (removed from disk by ``load``)

    def put(self, section: str, key: str, value) -> None:
        part = self.setdefault(section, {})
        if part.get(key) != value:
            part[key] = value
            self.dirty = True

    def drop(self, section: str, key: str) -> None:
        if self.get(section, {}).pop(key, None) is not None:
            self.dirty = True


def _read(path: Path):
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def load(out: Path) -> Manifest:
    m = _read(out / MANIFEST)
    if isinstance(m, dict) and m.get("version") == VERSION:
        m.setdefault("pages", {})
        m.setdefault("texts", {})
        m.setdefault("lists", {})
        written = _read(out / WRITTEN)
        (out / WRITTEN).unlink(missing_ok=True)   # until finish(): the directory is being changed
        return Manifest(m, written if isinstance(written, dict) else None)
    (out / WRITTEN).unlink(missing_ok=True)
    fresh = Manifest({"version": VERSION, "pages": {}, "texts": {}, "lists": {}})
    fresh.dirty = True
    return fresh


def save(out: Path, manifest: Manifest) -> None:
    """Write the manifest when an entry changed (or it was new)."""
    if manifest.dirty:
        write_atomic(out / MANIFEST, orjson.dumps(dict(manifest)))
        manifest.dirty = False


def finish(out: Path, manifest: Manifest, written: dict) -> None:
    """Save the manifest and record that ``out`` now holds the outputs ``written`` names (the
    nightly and its warehouse)."""
    save(out, manifest)
    write_atomic(out / WRITTEN, orjson.dumps(written))
    manifest.written = written
