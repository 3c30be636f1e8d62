"""`sources.yaml` and its pinned source copies (docs/rules.md#sources-configuration, docs/rules.md#source-copies), loaded into the warehouse.

A copy is trusted because its exact bytes are pinned (SHA-256), so every data file is read and
checked against its pin before anything is parsed or written.  Each copy's records are indexed by
their ``id_field`` value (a later duplicate id wins) and hashed once under every canonicalisation
evidence can name: the three identity names share ``hash_identity``; ``json-sorted-utf8-v1``
(the FAIRsharing projection) has ``hash_fairsharing``.  The source-check rules (sql/rules/S1.sql,
S2.sql, S0.sql) then only join evidence to these rows.

Every configuration problem is a :class:`groundwork.core.errors.ConfigError` with a one-line message
naming the file (the texts of the docs/rules.md#sources-configuration table).  The workbench itself lets these escape as a
traceback; groundwork prints the line and exits 2.
"""

from __future__ import annotations

import codecs
import hashlib
import itertools
import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from groundwork.core.jsontext import loads, needs_exact, vstr  # json.loads results at orjson speed; storable str()

from groundwork.core.canonical import CanonicalisationError, canonical_bytes, project_fairsharing, sha256_hex
from groundwork.core.engine import arrow
from groundwork.core.errors import ConfigError
from groundwork.core.pyrepr import pyrepr, pystr
from groundwork.core.regular import open_regular_file, read_regular
from groundwork.core.values import ARROW_ROWS, insert_values

if TYPE_CHECKING:   # annotations only: pyarrow is imported where a table is built
    import pyarrow as pa

REQUIRED_KEYS = ("snapshot_refs", "path", "id_field", "sha256")


def _one_line(text: str) -> str:
    """Collapse a (possibly multi-line) error text, e.g. a YAML parser error, onto one line."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


@dataclass(frozen=True)
class SourceEntry:
    """One entry of the ``sources`` list, validated for shape only (no file read yet)."""

    index: int                    # 0-based position in the sources list
    snapshot_refs: tuple[str, ...]  # str() of every listed ref (the look-up keys)
    path: str                     # the path as written in sources.yaml
    file: Path                    # path resolved against the directory holding sources.yaml
    id_field: object              # raw value (a string in any sensible file)
    pin: str                      # str() of the pinned sha256

    @property
    def copy_id(self) -> str:
        """Warehouse key of the copy: the pinned bytes plus the field that indexes them."""
        return f"{self.pin}:{pystr_safe(self.id_field)}"


@dataclass(slots=True)   # one per record of a copy: no per-object dict
class SourceRecord:
    record_id: str
    ord: int                      # position of the winning record among the file's records
    hash_identity: str | None
    hash_identity_error: str | None
    hash_fairsharing: str | None
    hash_fairsharing_error: str | None
    record_json: str              # compact sorted JSON of the whole record


@dataclass
class SourceCopy:
    """A data file whose bytes matched their pin, parsed into records by id."""

    entry: SourceEntry
    size: int
    format: str                   # json-array or jsonl
    records_read: int             # records in the file, duplicates included
    records: dict[str, SourceRecord] = field(default_factory=dict)   # empty when handed to ``records_to``


@dataclass
class SourcesConfig:
    path: str                     # as given
    sha256: str                   # of the YAML bytes
    entries: list[SourceEntry]

    def entry_for(self, ref) -> SourceEntry | None:
        """The entry serving evidence whose snapshot_ref is ``ref`` (looked up as str(ref))."""
        key = pystr(ref)
        for entry in self.entries:
            if key in entry.snapshot_refs:
                return entry
        return None


@dataclass
class LoadedSources:
    """What :func:`load_into_warehouse` did."""

    config_id: int
    config: SourcesConfig
    copies_loaded: list[str]      # copy ids parsed and written now
    copies_skipped: list[str]     # copy ids already in the warehouse (same pinned bytes)


# ------------------------------------------------------------------------------------------
# sources.yaml
# ------------------------------------------------------------------------------------------

def read_config(path: str | Path) -> tuple[str, list]:
    """Read a sources.yaml (YAML safe load) and return its hash and its ``sources`` list."""
    shown = str(path)
    try:
        raw = read_regular(path)  # a FIFO or device is refused, never waited on
        doc = yaml.safe_load(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {shown}: {_one_line(exc)}") from None
    except RecursionError:  # PyYAML's parser recurses: a few hundred levels exhaust it (the workbench's too)
        raise ConfigError(f"cannot read {shown}: YAML nested too deeply to parse") from None
    if doc is None:  # an empty file counts as {}
        doc = {}
    if not isinstance(doc, dict) or not isinstance(doc.get("sources"), list):
        raise ConfigError(f"{shown}: expected a top-level 'sources' list")
    return sha256_hex(raw), doc["sources"]


def make_entry(path: str | Path, index: int, item) -> SourceEntry:
    """Validate the shape of one item of the sources list."""
    shown = str(path)
    if not isinstance(item, dict) or any(key not in item for key in REQUIRED_KEYS):
        raise ConfigError(f"{shown}: each source needs snapshot_refs, path, id_field and sha256")
    refs_raw = item["snapshot_refs"]
    if not isinstance(refs_raw, list):
        # The workbench would iterate a string character by character (or crash on a number).
        raise ConfigError(f"{shown}: snapshot_refs of source {index + 1} must be a list, not {pyrepr_safe(refs_raw)}")
    written = pystr_safe(item["path"])
    return SourceEntry(index=index, snapshot_refs=tuple(pystr_safe(ref) for ref in refs_raw), path=written,
                       file=Path(path).parent / written, id_field=item["id_field"],
                       pin=pystr_safe(item["sha256"]))


@dataclass
class PinChecks:
    """Data files whose bytes matched their pins (table source_files), by absolute path: the
    file's identity (size, mtime_ns, ctime_ns, inode, device) and the pin. A file of a copy
    already loaded whose identity is the one recorded with the same pin is not read again: any
    write changes its mtime and ctime, and setting the mtime back changes the ctime (a file
    changed less than ``SETTLE_NS`` before it was read is not recorded)."""

    known: dict[str, tuple[tuple, str]] = field(default_factory=dict)
    checked: dict[str, tuple[tuple, str]] = field(default_factory=dict)   # read and matched now
    trust: bool = True   # False: every file is read (and recorded in ``checked``)


# A file changed less than this before it was read is not recorded: file times advance in clock
# ticks (a few ms), so a second write within the same tick would leave the times as they were.
SETTLE_NS = 2_000_000_000


def _identity(file: Path) -> tuple | None:
    try:
        st = os.stat(file)
    except OSError:
        return None   # read_pinned names the problem
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _settled(identity: tuple) -> bool:
    return time.time_ns() - max(identity[1], identity[2]) > SETTLE_NS


def check_sources(path: str | Path, *, already_loaded=frozenset(), pins: PinChecks | None = None,
                  records_to=None) -> tuple[SourcesConfig, list[SourceCopy]]:
    """Validate a sources.yaml and its copies, entry by entry, in the workbench's order.

    ``records_to(rows)``: each copy's records are handed to it RECORD_BATCH at a time, as rows
    of _RECORD_COLUMNS plus the id as UTF-8 bytes (a later duplicate id among them wins, by ord),
    instead of being held in ``records``: memory is then not in the copies' sizes.

    For each entry: its shape, its data file's bytes against the pin (with ``pins``: unless
    the file of a copy in ``already_loaded`` is as ``pins.known`` recorded it; every file read is
    added to ``pins.checked``), its records (not parsed again when its copy id is in
    ``already_loaded``), then its snapshot_refs against those of the earlier entries. Returns
    the configuration and the newly parsed copies.
    """
    sha, items = read_config(path)
    entries: list[SourceEntry] = []
    copies: dict[str, SourceCopy] = {}
    seen: set[str] = set()
    for index, item in enumerate(items):
        entry = make_entry(path, index, item)
        loaded = entry.copy_id in already_loaded or entry.copy_id in copies
        read = True
        if pins is not None:
            file, identity = str(Path(entry.file).resolve()), _identity(entry.file)   # stat first, then read
            read = not (pins.trust and loaded and identity is not None and pins.known.get(file) == (identity, entry.pin))
        if not loaded:
            copies[entry.copy_id] = load_copy(entry, records_to=records_to)   # (reads it through, pin first)
        elif read:
            check_pin(entry)
        if pins is not None and read and identity is not None and _settled(identity):
            pins.checked[file] = (identity, entry.pin)
        _refs_once(path, entry, seen)
        entries.append(entry)
    return SourcesConfig(path=str(path), sha256=sha, entries=entries), list(copies.values())


def _refs_once(path, entry: SourceEntry, seen: set[str]) -> None:
    """ConfigError when a snapshot_ref of ``entry`` is among ``seen`` (the earlier entries'), else add them."""
    for ref in entry.snapshot_refs:
        if ref in seen:
            raise ConfigError(f"{path}: snapshot_ref {pyrepr(ref)} is listed twice")
        seen.add(ref)


def check_config(path: str | Path) -> None:
    """ConfigError when a sources.yaml is unusable as a file (its YAML, its sources list, each
    entry's keys, a snapshot_ref listed twice), reading none of its copies: what a job checks
    before its long work (the copies are checked by the source check itself)."""
    _, items = read_config(path)
    seen: set[str] = set()
    for index, item in enumerate(items):
        _refs_once(path, make_entry(path, index, item), seen)


def pystr_safe(value) -> str:
    """str() of a YAML scalar (YAML also yields dates and timestamps, which str() like Python)."""
    try:
        return pystr(value)
    except TypeError:
        return str(value)


def pyrepr_safe(value) -> str:
    try:
        return pyrepr(value)
    except TypeError:
        return repr(value)


# ------------------------------------------------------------------------------------------
# Data files
# ------------------------------------------------------------------------------------------

def read_pinned(entry: SourceEntry) -> bytes:
    """Return the data file's bytes after checking them against the pin (docs/rules.md#source-copies)."""
    try:
        data = read_regular(entry.file)  # a FIFO or device is refused, never waited on
    except OSError as exc:
        raise ConfigError(f"source file {entry.file}: {exc}") from None
    _pinned(entry, hashlib.sha256(data).hexdigest())
    return data


def _pinned(entry: SourceEntry, actual: str) -> None:
    if actual != entry.pin:
        raise ConfigError(f"source file {entry.file} has sha256 {actual}, not the pinned {entry.pin}")


BLOCK = 1 << 20   # a data file is read through in blocks of this size


def _blocks(entry: SourceEntry):
    """The data file's bytes, BLOCK at a time (a FIFO or device is refused, never waited on)."""
    try:
        fh = open_regular_file(entry.file)
    except OSError as exc:
        raise ConfigError(f"source file {entry.file}: {exc}") from None
    with fh:
        while True:
            try:
                block = fh.read(BLOCK)
            except OSError as exc:
                raise ConfigError(f"source file {entry.file}: {exc}") from None
            if not block:
                return
            yield block


def check_pin(entry: SourceEntry) -> None:
    """Check the data file's bytes against the pin, a block at a time (a copy already loaded:
    the same bytes, so the same records)."""
    digest = hashlib.sha256()
    for block in _blocks(entry):
        digest.update(block)
    _pinned(entry, digest.hexdigest())


def _decode_error(exc: UnicodeDecodeError, offset: int) -> str:
    """``str(exc)`` as bytes.decode of the whole file words it, for an error ``offset`` bytes in."""
    if exc.end - exc.start == 1:
        return (f"'{exc.encoding}' codec can't decode byte 0x{exc.object[exc.start]:02x} in position "
                f"{exc.start + offset}: {exc.reason}")
    return f"'{exc.encoding}' codec can't decode bytes in position {exc.start + offset}-{exc.end - 1 + offset}: {exc.reason}"


def read_through(entry: SourceEntry) -> tuple[int, bool]:
    """Read the data file through once, holding one block at a time: its pin checked, then its
    text's UTF-8 (the whole file's first error, as the workbench's decoding of all of it reports
    it). Returns its size and whether its text is a JSON array (``[`` after whitespace)."""
    digest, size, first, error = hashlib.sha256(), 0, None, None
    decoder = codecs.getincrementaldecoder("utf-8")()
    for block in _blocks(entry):
        digest.update(block)
        if error is None:
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(block)
            except UnicodeDecodeError as exc:
                error = _decode_error(exc, size - pending)
            else:
                if first is None and text.lstrip():
                    first = text.lstrip()[0]
        size += len(block)
    if error is None:
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(b"", True)
        except UnicodeDecodeError as exc:
            error = _decode_error(exc, size - pending)
    _pinned(entry, digest.hexdigest())
    if error is not None:
        raise ConfigError(f"source file {entry.file}: not UTF-8: {error}")
    return size, first == "["


def _jsonl_lines(entry: SourceEntry):
    """The lines of a JSON Lines data file that read_through passed, as ``text.splitlines()`` of
    its whole text gives them, read again a line at a time (its pin checked again at the end: a
    file changed in between is refused)."""
    digest = hashlib.sha256()
    pending: list[bytes] = []   # the blocks of a line not ended yet
    for block in itertools.chain(_blocks(entry), [None]):
        if block is not None:
            digest.update(block)
            cut = block.rfind(b"\n") + 1
            if not cut:
                pending.append(block)
                continue
            pending.append(block[:cut])
            chunk, pending = b"".join(pending), [block[cut:]]
        else:
            chunk, pending = b"".join(pending), []
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"source file {entry.file} changed while it was read") from None
        # a chunk ends at a newline (or the file's end): splitting it gives the whole text's lines
        yield from split_lines(text)
    _pinned(entry, digest.hexdigest())


def _json_error(entry: SourceEntry, exc: Exception, line: int | None = None) -> ConfigError:
    where = f" line {line}:" if line is not None else ""
    return ConfigError(f"source file {entry.file}:{where} not valid JSON: {_one_line(exc)}")


# Where str.splitlines() splits: \r\n, then each of \n \r \v \f \x1c \x1d \x1e \x85 \u2028 \u2029.
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str):
    """The lines of ``text`` as ``text.splitlines()`` gives them, one at a time (a copy's lines
    are not all held at once beside its text)."""
    start = 0
    for m in _LINE_BREAK.finditer(text):
        yield text[start:m.start()]
        start = m.end()
    if start < len(text):
        yield text[start:]


def decode(entry: SourceEntry, data: bytes) -> str:
    """A data file's text (docs/rules.md#source-copies): strict UTF-8, a BOM kept (and then not JSON)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"source file {entry.file}: not UTF-8: {exc}") from None


def parse_values(entry: SourceEntry, text: str):
    """Split a data file's text into its record values (docs/rules.md#source-copies): a JSON
    array (a list), else JSON Lines (parsed one line at a time as they are taken, so that only
    the records' index is held, not every parsed value: a JSON error is raised when its line is
    reached)."""
    exact = needs_exact(text)
    if text.lstrip().startswith("["):
        try:
            return "json-array", loads(text, exact)
        except (ValueError, RecursionError) as exc:
            raise _json_error(entry, exc) from None

    return "jsonl", _jsonl_values(entry, split_lines(text), exact)


def _jsonl_values(entry: SourceEntry, lines, exact: bool | None = None):
    """The values of JSON Lines ``lines`` (blank ones skipped), parsed as they are taken; a JSON
    error names its line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield loads(line, exact)
        except (ValueError, RecursionError) as exc:
            raise _json_error(entry, exc, number) from None


def _hash(value) -> tuple[str | None, str | None, bytes | None]:
    try:
        data = canonical_bytes(value)
    except CanonicalisationError as exc:
        return None, str(exc), None
    return sha256_hex(data), None, data


def index_records(entry: SourceEntry, values, records_to=None) -> tuple[dict[str, SourceRecord], int]:
    """Index records by their id_field string (later duplicate wins), each hashed as it is taken
    from ``values`` (a list, or parse_values' lines); returns the index and the records read.
    As the workbench parses the whole file before it looks at a record, a JSON error anywhere
    wins over a record without an id: that error is raised once every value is parsed. With
    ``records_to`` (check_sources) the index stays empty: the records go there as rows."""
    id_field = entry.id_field
    out: dict[str, SourceRecord] = {}
    rows: list[tuple] = []
    missing_id = None
    read = 0
    for ord_, record in enumerate(values):
        read += 1
        if missing_id is not None:
            continue   # only parsed, for a JSON error further on
        rid = record.get(id_field) if isinstance(record, dict) and isinstance(id_field, str) else None
        if not isinstance(rid, str):
            missing_id = ConfigError(f"source file {entry.file}: a record has no string {pyrepr_safe(id_field)}")
            out.clear()
            continue
        h_id, e_id, data = _hash(record)
        h_fs, e_fs, _ = _hash(project_fairsharing(record))
        text = data.decode("utf-8") if data is not None else json.dumps(
            record, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        if records_to is None:
            out[rid] = SourceRecord(rid, ord_, h_id, e_id, h_fs, e_fs, text)
            continue
        rows.append(_record_row(entry.copy_id, SourceRecord(rid, ord_, h_id, e_id, h_fs, e_fs, text))
                    + (rid.encode("utf-8", "surrogatepass"),))
        if len(rows) >= RECORD_BATCH:
            records_to(rows)
            rows = []
    if missing_id is not None:
        raise missing_id
    if rows:
        records_to(rows)
    return out, read


def load_copy(entry: SourceEntry, data: bytes | None = None, records_to=None) -> SourceCopy:
    """Read (unless ``data`` is given, already pin-checked), parse and index one copy (its
    records handed to ``records_to`` instead, when given: check_sources). Read from its file,
    a JSON Lines copy is never held whole: it is read through (pin, UTF-8) and then parsed a
    line at a time; a JSON array is parsed whole, as the workbench does."""
    if data is None:
        size, array = read_through(entry)
        if not array:
            records, read = index_records(entry, _jsonl_values(entry, _jsonl_lines(entry)), records_to)
            return SourceCopy(entry=entry, size=size, format="jsonl", records_read=read, records=records)
        data = read_pinned(entry)
    size, text = len(data), decode(entry, data)
    del data   # (the caller's, when given)
    fmt, values = parse_values(entry, text)
    records, read = index_records(entry, values, records_to)
    return SourceCopy(entry=entry, size=size, format=fmt, records_read=read, records=records)


def load_sources(path: str | Path) -> tuple[SourcesConfig, list[SourceCopy]]:
    """Load a sources.yaml and every copy in memory (docs/rules.md#sources-configuration, docs/rules.md#source-copies)."""
    return check_sources(path)


# ------------------------------------------------------------------------------------------
# Warehouse
# ------------------------------------------------------------------------------------------

def _config_id(con, config: SourcesConfig) -> int:
    abspath = str(Path(config.path).resolve())
    row = con.execute("SELECT config_id FROM source_configs WHERE path = ? AND sha256 = ?",
                      [abspath, config.sha256]).fetchone()
    if row:
        return row[0]
    new_id = con.execute("SELECT coalesce(max(config_id), 0) + 1 FROM source_configs").fetchone()[0]
    con.execute("INSERT INTO source_configs VALUES (?, ?, ?, ?, ?)",
                [new_id, abspath, config.sha256, datetime.now(timezone.utc).replace(tzinfo=None),
                 len(config.entries)])
    rows = [(new_id, e.index, ref, e.copy_id, e.path, str(e.file), pystr_safe(e.id_field), e.pin)
            for e in config.entries for ref in e.snapshot_refs]
    if rows:
        names = ["config_id", "entry_index", "snapshot_ref", "copy_id", "path", "file", "id_field", "sha256"]
        insert_values(con, "source_refs", names, rows)
    return new_id


def _insert_arrow(con, table: str, data: pa.Table) -> None:
    name = f"_arrow_{table}"
    con.register(name, data)
    try:
        con.execute(f"INSERT INTO {table} ({', '.join(data.column_names)}) SELECT * FROM {name}")
    finally:
        con.unregister(name)


_RECORD_COLUMNS = ("copy_id", "record_id", "ord", "hash_identity", "hash_identity_error", "hash_fairsharing",
                   "hash_fairsharing_error", "record_json")


# Arrow types of _RECORD_COLUMNS, for a copy inserted through Arrow.
_RECORD_TYPES = ("string", "string", "int32", "string", "string", "string", "string", "string")
_STAGE_COLUMNS, _STAGE_TYPES = _RECORD_COLUMNS + ("id_bytes",), _RECORD_TYPES + ("binary",)


RECORD_BATCH = 10_000   # records per insert (load_into_warehouse: the copies' records are never all held)
_STAGE = "_gw_source_records"   # TEMP: the records of the copies being loaded, duplicate ids included


def _record_row(copy_id: str, r: SourceRecord) -> tuple:
    # stored like evidence.source_id: a lone surrogate (JSON escape) becomes U+FFFD
    return (copy_id, vstr(r.record_id), r.ord, r.hash_identity, r.hash_identity_error, r.hash_fairsharing,
            r.hash_fairsharing_error, r.record_json)


def _insert_rows(con, table: str, names, kinds, rows: list[tuple]) -> None:
    """``rows`` into ``table``: with bound parameters when they are few (a drop-in verify then
    never imports pyarrow), else as one Arrow table."""
    if len(rows) <= ARROW_ROWS:
        insert_values(con, table, names, rows)
        return
    pa = arrow()
    _insert_arrow(con, table, pa.table({name: pa.array(list(column), getattr(pa, kind)()) for name, column, kind
                                        in zip(names, zip(*rows), kinds)}))


def _stage(con) -> None:
    """The TEMP table the records of the copies being loaded go to (check_sources' ``records_to``)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_STAGE} AS SELECT *, NULL::BLOB AS id_bytes FROM source_records LIMIT 0")


def _from_stage(con, copy: SourceCopy) -> int:
    """The staged records of ``copy`` into source_records, the last of each id (by ord) only, as
    the workbench's index keeps it (ids told apart as UTF-8 bytes: two ids that differ only in
    a lone surrogate are two records, though both are stored with U+FFFD); returns how many."""
    names = ", ".join(_RECORD_COLUMNS)
    return con.execute(f"""
        INSERT INTO source_records ({names})
        SELECT {names} FROM {_STAGE} WHERE copy_id = $copy
        QUALIFY row_number() OVER (PARTITION BY id_bytes ORDER BY ord DESC) = 1""",
                       {"copy": copy.entry.copy_id}).fetchall()[0][0]


PINNED_FILES = ("read", "record", "trust")


def load_into_warehouse(con, path: str | Path, *, pinned_files: str = "read") -> LoadedSources:
    """Load a sources.yaml and its copies into the warehouse; idempotent.

    Every data file is checked against its pin before anything is written; a copy whose pinned
    bytes (and id field) are already in the warehouse is not parsed again. ``pinned_files``:
    ``read`` every data file; ``record`` too, each file read (its identity, ``PinChecks``) in
    table source_files; ``trust`` (the nightly job, except on a full scan) the file of a copy
    already loaded that is as source_files recorded it with the same pin, without reading it,
    recording the others.
    """
    if pinned_files not in PINNED_FILES:
        raise ValueError(f"pinned_files: one of {', '.join(PINNED_FILES)}, not {pinned_files!r}")
    have = {row[0] for row in con.execute("SELECT copy_id FROM source_copies").fetchall()}
    pins = None
    if pinned_files != "read":
        pins = PinChecks({file: (tuple(identity), pin) for file, *identity, pin in con.execute(
            "SELECT file, size, mtime_ns, ctime_ns, inode, device, sha256 FROM source_files").fetchall()},
            trust=pinned_files == "trust")
    # The records are staged batch by batch, each committed: DuckDB holds a transaction's new rows
    # in memory (a 150 MB copy staged in one transaction took ~150 MB more), while committed rows
    # of a TEMP table are within its memory limit. Only the copies' rows, taken from the stage,
    # and the configuration's go in one transaction.
    _stage(con)
    try:
        config, copies = check_sources(path, already_loaded=have, pins=pins,
                                       records_to=lambda rows: _insert_rows(con, _STAGE, _STAGE_COLUMNS, _STAGE_TYPES, rows))
        skipped = list(dict.fromkeys(e.copy_id for e in config.entries if e.copy_id in have))
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        con.execute("BEGIN TRANSACTION")
        try:
            for copy in copies:
                distinct = _from_stage(con, copy)
                con.execute("INSERT INTO source_copies VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [copy.entry.copy_id, copy.entry.pin, pystr_safe(copy.entry.id_field), copy.format,
                             copy.size, copy.records_read, distinct, now])
            config_id = _config_id(con, config)
            if pins is not None:
                for file, (identity, pin) in pins.checked.items():
                    con.execute("INSERT OR REPLACE INTO source_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                [file, *identity, pin, now])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_STAGE}")
    return LoadedSources(config_id=config_id, config=config, copies_loaded=[c.entry.copy_id for c in copies],
                         copies_skipped=skipped)
