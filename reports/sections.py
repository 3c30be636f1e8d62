"""Fleet-report sections kept between nightlies: ``OUT/.groundwork-sections.json``.

The recorded-vs-today drift and the unresolved evidence by source (the fleet report's), and the
JUnit testsuites (reports/machine.py) read only the nightly's check passes, the runs' stored rows
and the finding severities, and cost most of the reports' queries over a large warehouse (the
drift joins every run's recorded texts). A nightly with nothing
changed reads the same passes and runs as the one before, so it takes these sections from the
file instead of querying them again, when the file's key is tonight's: a digest of what they read
(sql/reports/sections_key.sql: the schema, the passes as recorded, the latest pass, the runs, the
latest ingest that changed one, the severities), the report queries (sql/reports/), the code that
shapes them (reports/data.py) and groundwork's version. Any other key: computed, and the file
rewritten. Either way a section is the value's JSON form read back, so a kept section and a
computed one are the same values (tests/reports/test_sections.py holds them to each other).
Deleting the file only costs the queries again.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import orjson

from groundwork import __version__
from groundwork.reports import data, manifests
from groundwork.reports.output import write_atomic

FILE = ".groundwork-sections.json"
VERSION = 1


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """The report queries and reports/data.py: what shapes a section besides the warehouse."""
    files = sorted(data.QUERIES_DIR.glob("*.sql")) + [Path(data.__file__)]
    return manifests.digest(*(f"{f.name}\n{f.read_text(encoding='utf-8')}" for f in files))


def _normal(value):
    """``value`` as its JSON form reads back (tuples become lists): what a kept section is."""
    return orjson.loads(orjson.dumps(value))


class Kept:
    """The sections of one key: ``get(name, compute)`` gives the kept value, else computes it;
    ``save()`` writes the file when a section was computed. Without a key (no nightly), nothing is
    kept: every section is computed."""

    def __init__(self, path: Path | None, key: str | None, sections: dict):
        self.path, self.key, self.sections, self.dirty = path, key, sections, False

    def get(self, name: str, compute):
        if self.key is None:
            return compute()
        if name not in self.sections:
            self.sections[name] = _normal(compute())
            self.dirty = True
        return _normal(self.sections[name])   # a copy: the caller may add to it

    def save(self) -> None:
        if self.dirty:
            write_atomic(self.path, orjson.dumps({"version": VERSION, "key": self.key, "sections": self.sections}))
            self.dirty = False


def key(con, p: data.Passes) -> str | None:
    """The key of nightly ``p``'s sections (None: ``p`` is no nightly's)."""
    if p.nightly_id is None:
        return None
    row = data.rows(con, "sections_key", nightly=p.nightly_id, lint=p.lint_id, verify=p.verify_id)[0]
    return manifests.digest(__version__, _code_digest(), p.lint_id, p.verify_id,
                            orjson.dumps(row, default=str).decode())


def load(con, out: Path, p: data.Passes) -> Kept:
    """The sections kept in ``out`` for nightly ``p``: those of the file when its key is ``p``'s, else none."""
    return keyed(out, key(con, p))


def keyed(out: Path, k: str | None) -> Kept:
    """The sections kept in ``out`` under key ``k`` (``key``'s: None for no nightly)."""
    if k is None:
        return none()
    path = Path(out) / FILE
    try:
        found = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        found = None
    if isinstance(found, dict) and found.get("version") == VERSION and found.get("key") == k \
            and isinstance(found.get("sections"), dict):
        return Kept(path, k, found["sections"])
    return Kept(path, k, {})


def none() -> Kept:
    """Nothing kept: every section computed (a report that is no nightly's)."""
    return Kept(None, None, {})
