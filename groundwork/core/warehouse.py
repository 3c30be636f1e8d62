"""Open the DuckDB warehouse file and apply the schema (the files of sql/schema/).

A file is opened as a warehouse only when it is one: a DuckDB database whose ``schema_info``
records a ``schema_version`` (or an empty DuckDB database: a new one). A file of another
application is refused, untouched; a warehouse of a newer groundwork (a higher schema_version)
too, even read-only; an older one is migrated forward by applying the schema (00_migrations.sql
first), in one transaction.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path


from groundwork.core.cachedir import cache_dir
from groundwork.core.engine import duckdb
from groundwork.core.errors import GroundworkError, WarehouseLocked
from groundwork.core.escape import visible
from groundwork.core.paths import SCHEMA_DIR

DEFAULT_PATH = "warehouse.duckdb"


def schema_files(directory: Path | None = None) -> tuple[Path, ...]:
    """The files of the schema, in the order they are applied: file name order, a folder's files
    where the folder's name sorts (00_migrations.sql, 10_tables.sql, ..., 30_derived/01_lint_runs.sql,
    ..., 50_investigation.sql; docs/schema.md)."""
    directory = SCHEMA_DIR if directory is None else directory
    return tuple(sorted(directory.rglob("*.sql"), key=lambda p: p.relative_to(directory).parts))


def schema_sql() -> str:
    """The whole schema, the only DDL of the project: the text of its files, in order."""
    return "\n".join(path.read_text(encoding="utf-8") for path in schema_files())


_VERSION_LINE = re.compile(r"^INSERT OR REPLACE INTO schema_info VALUES \('schema_version', '(\d+)'\);", re.M)


@lru_cache(maxsize=1)
def schema_version() -> int:
    """The schema_version this groundwork writes: the one line of 10_tables.sql that stores it."""
    found = _VERSION_LINE.findall(schema_sql())
    if len(found) != 1:
        raise AssertionError("sql/schema must store schema_version exactly once")
    return int(found[0])


class NotAWarehouse(GroundworkError):
    """The file is not a groundwork warehouse (another application's, or not a DuckDB database)."""


class NewerWarehouse(GroundworkError):
    """The warehouse was written by a newer groundwork (its schema_version is higher than ours)."""


def _not_a_warehouse(path: str, why: str) -> NotAWarehouse:
    return NotAWarehouse(f"{path} is not a groundwork warehouse ({why}); left untouched")


def stored_version(con: duckdb.DuckDBPyConnection, path: str = "the database") -> int | None:
    """The schema_version the warehouse of ``con`` records; None for an empty DuckDB database (no
    table or view: a new one, or one whose creation stopped before its schema was committed).
    Raise NotAWarehouse for a database of another application. Reads only."""
    try:
        rows = con.execute("SELECT value FROM schema_info WHERE key = 'schema_version'").fetchall()
    except duckdb.Error:  # no schema_info, or another application's table of that name
        objects = con.execute(
            "SELECT (SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database())"
            " + (SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() AND NOT internal)"
        ).fetchall()[0][0]
        if objects == 0:
            return None
        raise _not_a_warehouse(path, f"a DuckDB database of another application: {objects} tables and views, "
                                     "no groundwork schema_info") from None
    if len(rows) != 1 or not str(rows[0][0]).isdigit():
        raise _not_a_warehouse(path, "its schema_info records no schema_version")
    return int(rows[0][0])


def check_version(con: duckdb.DuckDBPyConnection, path: str = "the database") -> int | None:
    """``stored_version``, refusing a warehouse of a newer groundwork (NewerWarehouse)."""
    version = stored_version(con, path)
    if version is not None and version > schema_version():
        raise NewerWarehouse(f"warehouse {path} was written by a newer groundwork (schema version {version}; this "
                             f"groundwork writes {schema_version()}): upgrade groundwork to use it; left untouched")
    return version


def _schema_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# The documentation statements of the schema (one per table, view and column). DuckDB runs each
# as a catalog ALTER, ~0.2 ms apiece: ~0.1 s of the schema's ~0.17 s.
_COMMENT = re.compile(r"^COMMENT ON (?:TABLE|VIEW|COLUMN) [^\n']*? IS '(?:[^']|'')*';[ \t]*\n?", re.M)


@lru_cache(maxsize=2)
def _without_comments(text: str) -> str:
    return _COMMENT.sub("", text)


def apply_schema(con: duckdb.DuckDBPyConnection, *, comments: bool = True, path: str = "the database") -> None:
    """Create every table and view (idempotent), in one transaction.

    A warehouse whose schema_info already records the digest of this schema (``schema_sql``) is
    left alone: re-applying ~600 statements costs a noticeable fraction of a second on every command.
    An older warehouse is migrated forward: 00_migrations.sql adds the columns it lacks, the other
    files add what is new and 10_tables.sql records today's schema_version — all or nothing.
    A database of another application (NotAWarehouse) or of a newer groundwork (NewerWarehouse) is
    refused before anything is written.
    ``comments=False`` leaves out the COMMENT ON statements (the documentation that
    ``duckdb_columns().comment`` and docs/schema.md show), for throwaway in-memory warehouses.
    """
    check_version(con, path)
    text = schema_sql()
    digest = _schema_digest(text)
    try:
        rows = con.execute("SELECT value FROM schema_info WHERE key = 'schema_sha256'").fetchall()
    except duckdb.CatalogException:
        rows = []
    if rows and rows[0][0] == digest:
        return
    try:
        with transaction(con):
            con.execute(text if comments else _without_comments(text))
            con.execute("INSERT OR REPLACE INTO schema_info VALUES ('schema_sha256', $d)", {"d": digest})
    except (duckdb.CatalogException, duckdb.BinderException, duckdb.ConstraintException) as exc:
        # tables of the schema's names that are not its tables (a file half made by hand, say):
        # the transaction rolled back, nothing written
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _not_a_warehouse(path, f"its tables do not take this groundwork's schema: {first}") from None


# The tables and views of the schema, each with the relations its statement names: for a
# warehouse that needs only some of them (``apply_schema_for``). A statement ends with ";" at the
# end of a line (as every statement of sql/schema/ does); the ALTER migrations and the
# schema_info row concern warehouse files only.
_CREATE = re.compile(r"^CREATE (?:OR REPLACE )?(?:TABLE|VIEW) (?:IF NOT EXISTS )?(\w+)", re.M)
_END = re.compile(r";[ \t]*(?:\n|$)")
_WORD = re.compile(r"\b\w+\b")


@lru_cache(maxsize=2)
def _relation_statements(text: str) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """(name, statement, relations it names) of each CREATE TABLE / VIEW of ``text``, in order."""
    found = []
    for statement in _END.split(_without_comments(text)):
        m = _CREATE.search(statement)
        if m:
            found.append((m.group(1), statement[m.start():].strip(), frozenset(_WORD.findall(statement[m.end():]))))
    names = {name for name, _, _ in found}
    return tuple((name, sql, words & names) for name, sql, words in found)


def relations_named(sql: str) -> frozenset[str]:
    """The tables and views of the schema that ``sql`` names (by word: comments count too)."""
    names = {name for name, _, _ in _relation_statements(schema_sql())}
    return frozenset(_WORD.findall(sql)) & names


def apply_schema_for(con: duckdb.DuckDBPyConnection, names) -> None:
    """Create only the tables and views ``names`` of the schema, and what those views read
    (transitively), in schema order, without their documentation comments or a schema_info row.

    For a throwaway in-memory warehouse holding one run (the drop-in lint and verify), where the
    whole schema (every history table and ~30 views, each bound as it is created) would cost more
    than the check itself.
    """
    statements = _relation_statements(schema_sql())
    wanted = set(names)
    unknown = wanted - {name for name, _, _ in statements}
    if unknown:
        raise GroundworkError(f"not a table or view of the schema: {', '.join(sorted(unknown))}")
    chosen = []
    for name, sql, reads in reversed(statements):  # a statement reads only what comes before it
        if name in wanted:
            chosen.append(sql)
            wanted |= reads
    con.execute(";\n".join(reversed(chosen)))


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection):
    """BEGIN … COMMIT around the block, ROLLBACK on any error."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*")
_BYTES = {"": 1, "b": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def size_bytes(text: str | None) -> float | None:
    """A DuckDB size setting ('18.2 GiB', '256MiB', '64MB') in bytes; None when unreadable."""
    m = _SIZE.fullmatch(text or "")
    return float(m.group(1)) * _BYTES[m.group(2).lower()] if m and m.group(2).lower() in _BYTES else None


MIN_SETTING_MEMORY = 16 * 10**6   # 16MB as DuckDB reads it (10**6 bytes a MB): below, it fails any ingest


def memory_setting(name: str, default: str) -> str:
    """A DuckDB memory size from the environment variable ``name`` ('256MB', '1GiB'), else
    ``default``; a GroundworkError, in one line, when it is no size or under 16 MiB."""
    raw = os.environ.get(name, "")
    if raw == "":
        return default
    found = size_bytes(raw.strip())
    if found is None or found < MIN_SETTING_MEMORY:
        raise GroundworkError(f"{name}={visible(raw)} is not a memory size of 16MB or more (e.g. 128MB, 1GB)")
    return raw.strip()


JOB_MEMORY = "256MB"  # DuckDB's memory for a job's checks and reports (nightly, watch, lint/verify -w):
                      # its default, 80 % of RAM, let a fresh nightly grow with the archive
                      # (1.1 GB at 100,000 runs); past this bound DuckDB spills to <warehouse>.tmp


def job_memory() -> str:
    """DuckDB's memory for a job on a warehouse file: $GROUNDWORK_MEMORY, else JOB_MEMORY (the
    ingest lowers it further: $GROUNDWORK_INGEST_MEMORY). A job calls it before its work: a bad
    value is one line before anything is created."""
    return memory_setting("GROUNDWORK_MEMORY", JOB_MEMORY)


@contextmanager
def memory_at_most(con: duckdb.DuckDBPyConnection, limit: str):
    """Lower DuckDB's memory_limit to ``limit`` (never raise it) for the block, then restore it:
    RESET when it was the default (a share of the free memory, so only about equal to a RESET
    now), else the value DuckDB shows (rounded, e.g. '2.7 GiB')."""
    def current() -> str:
        return con.execute("SELECT CAST(current_setting('memory_limit') AS VARCHAR)").fetchall()[0][0]

    previous = current()
    wanted, had = size_bytes(limit), size_bytes(previous)
    lower = wanted is not None and had is not None and wanted < had
    if lower:
        con.execute("RESET memory_limit")
        was_default = abs(size_bytes(current()) / had - 1) < 0.02
        con.execute("SET memory_limit = $limit", {"limit": limit})
    try:
        yield
    finally:
        if lower:
            if was_default:
                con.execute("RESET memory_limit")
            else:  # DuckDB shows one decimal, cut: the middle of that interval shows the same
                m = _SIZE.fullmatch(previous)
                con.execute("SET memory_limit = $previous", {"previous": f"{float(m.group(1)) + 0.05}{m.group(2)}"})


# A new warehouse file starts as a copy of an empty one with the schema applied, kept in the cache
# folder ``warehouses`` (cachedir; $GROUNDWORK_SCHEMA_CACHE names another folder, or "off"):
# applying the schema's ~600 statements to a new file costs ~0.2 s of CPU (two thirds of it the
# COMMENT ON statements), copying the 0.8 MB file ~1 ms. One template per schema text (every file
# of sql/schema/, in order: ``schema_sql``), DuckDB version and STORAGE_VERSION; the copy is then opened like any
# warehouse, so apply_schema still checks it.
SCHEMA_CACHE_ENV = "GROUNDWORK_SCHEMA_CACHE"


def _template_path() -> Path | None:
    folder = cache_dir(SCHEMA_CACHE_ENV, "warehouses")
    if folder is None:
        return None
    key = hashlib.sha256(f"{schema_sql()}\0{duckdb.__version__}\0{STORAGE_VERSION}".encode("utf-8")).hexdigest()[:24]
    return folder / f"empty-{key}.duckdb"


def _discard(path: str | Path) -> None:
    for p in (Path(path), Path(f"{path}.wal")):
        try:
            p.unlink()
        except OSError:
            pass


def _build_template(template: Path) -> bool:
    tmp = template.with_name(f".{template.name}.{os.getpid()}.build")
    _discard(tmp)
    try:
        con = _open_for_writing(str(tmp))
        try:
            apply_schema(con)
        finally:
            con.close()  # checkpoints: the whole database in the one file
        os.replace(tmp, template)
        return True
    except (OSError, duckdb.Error):
        return False
    finally:
        _discard(tmp)


def _copy_template(path: Path) -> bool:
    """Create the new warehouse file ``path`` as a copy of the cached empty warehouse (made on
    first use). False, touching nothing, when there is no cache or anything goes wrong; a file
    that appears at ``path`` meanwhile is never overwritten."""
    template = _template_path()
    if template is None or (not template.is_file() and not _build_template(template)):
        return False
    import shutil  # here: a drop-in process never copies a warehouse (shutil imports bz2, lzma)

    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        shutil.copyfile(template, tmp)
        os.link(tmp, path)  # fails when path exists: then it is that file that gets opened
        return True
    except OSError:
        return False
    finally:
        _discard(tmp)


def _lock_message(path: str, exc: Exception) -> str:
    text = str(exc)
    m = re.search(r"Conflicting lock is held in (.*?) \(PID (\d+)\)", text)
    if m:
        return f"warehouse {path} is locked by another process: {m.group(1)} (PID {m.group(2)}); try again when it has finished"
    return f"warehouse {path} is locked by another process; try again when it has finished"


# Rows per row group of what this process writes (DuckDB's default is 122,880). Every checkpoint
# rewrites the row groups appended to since the last one, whole: with the default, the runs
# table (one row per run, ~2.6 KB of envelope JSON each) sits in one open row group until 122,880
# runs, so each of an ingest's checkpoints recompressed every run loaded so far. An ingest of
# 100,000 runs spent 16.8 s of CPU writing; with 16,384-row groups 9.0 s.
ROW_GROUP_SIZE = 16384
_RESERVED_NAMES = {"memory", "system", "temp", "main"}

# The storage format of the warehouse files groundwork creates (a file keeps the format it was
# created with; DuckDB 2 reads and writes both). DuckDB 2's own format (storage version 69) cannot
# be opened by the DuckDB shell a user can install from the package registry (duckdb-cli 1.5:
# "can only read versions between 64 and 68"), so the README's `duckdb -readonly` step would
# fail. This format costs nothing measurable: at 15,000 synthetic runs the file had the same size
# to the byte (56.9 MB) and the ingest and lint the same CPU time within noise (README.md).
STORAGE_VERSION = "v1.5.0"


def attach_options(new: bool) -> str:
    """The ATTACH options of a warehouse file groundwork writes: ROW_GROUP_SIZE (DuckDB takes it
    only when attaching; it is not stored in the file) and, for a file it creates, STORAGE_VERSION."""
    return f"ROW_GROUP_SIZE {ROW_GROUP_SIZE}" + (f", STORAGE_VERSION '{STORAGE_VERSION}'" if new else "")


def _open_for_writing(path: str) -> duckdb.DuckDBPyConnection:
    """A connection whose current database is the warehouse file, attached with ``attach_options``.
    The database keeps the name duckdb.connect(path) would give it (the file name's stem), and
    spills where it would spill (``<path>.tmp``)."""
    name = Path(path).stem
    if not name or name.lower() in _RESERVED_NAMES:
        name = "warehouse"
    new = not os.path.exists(path)
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH $path AS {quote_identifier(name)} ({attach_options(new)})", {"path": path})
        con.execute(f"USE {quote_identifier(name)}")
        # Where DuckDB spills when a query outgrows its memory: an in-memory database (this
        # connection's first) would spill into ./.tmp of whatever the current directory is; a file
        # opened directly spills next to it, into <file>.tmp. Keep the latter.
        con.execute("SET temp_directory = $dir", {"dir": path + ".tmp"})
    except BaseException:
        con.close()
        raise
    return con


# How long an open waits for a lock held by another process (a `groundwork watch` batch, a
# nightly, a `groundwork sql`): DuckDB lets one process write a file, and a writer also shuts out
# the read-only opens of other processes (README.md#sharing-the-warehouse).
LOCK_WAIT_ENV = "GROUNDWORK_LOCK_WAIT"
LOCK_WAIT = 10.0


# The longest pause between two tries of an open that waits: `groundwork watch` leaves the file
# free a little longer than this between two batches (groundwork.jobs.watch.GAP).
RETRY_PAUSE = 0.05


def lock_wait() -> float:
    """Seconds an open waits for another process's lock: $GROUNDWORK_LOCK_WAIT (a GroundworkError,
    in one line, when it is no number of seconds), else LOCK_WAIT."""
    raw = os.environ.get(LOCK_WAIT_ENV, "")
    if raw == "":
        return LOCK_WAIT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not 0 <= seconds < float("inf"):
        raise GroundworkError(f"{LOCK_WAIT_ENV}={visible(raw)} is not a number of seconds (0 or more)")
    return seconds


def _open_waiting(path: str, read_only: bool, wait: float) -> duckdb.DuckDBPyConnection:
    """Open the file; while another process holds a conflicting lock on it, try again (every 10 ms
    at first, then at most every RETRY_PAUSE seconds) until ``wait`` seconds have passed, then
    raise DuckDB's lock error."""
    deadline = time.monotonic() + wait
    pause = 0.01
    while True:
        try:
            return duckdb.connect(path, read_only=read_only) if read_only or path == ":memory:" else _open_for_writing(path)
        except duckdb.IOException as exc:
            left = deadline - time.monotonic()
            if "lock" not in str(exc).lower() or left <= 0:
                raise
        time.sleep(min(pause, left))
        pause = min(pause * 2, RETRY_PAUSE)


def quote_identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A new cursor of ``con`` whose current database is ``con``'s (a plain ``con.cursor()``
    starts in the process's in-memory database when the warehouse was attached)."""
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    cur = con.cursor()
    cur.execute(f"USE {quote_identifier(database)}")
    return cur


def _existing_file(path: str) -> bool:
    """Whether the warehouse file ``path`` exists. Refuse (NotAWarehouse), before DuckDB opens it, a
    path that is not a regular file or a file that is not a DuckDB database: DuckDB would try to
    download an extension to open, e.g., a SQLite file (and refuses an empty file itself)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise GroundworkError(f"cannot open warehouse {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise _not_a_warehouse(path, "a directory")
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_warehouse(path, "not a regular file")
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError as exc:
        raise GroundworkError(f"cannot read warehouse {path}: {exc.strerror or exc}") from None
    if head[8:12] != b"DUCK":  # a DuckDB file's magic bytes
        raise _not_a_warehouse(path, "not a DuckDB database file")
    return True


def _open(path: str, read_only: bool, copied: bool, wait: float) -> duckdb.DuckDBPyConnection:
    """Open the file ``path``, waiting up to ``wait`` seconds for another process's lock (a
    one-line GroundworkError / WarehouseLocked when DuckDB cannot)."""
    try:
        try:
            return _open_waiting(path, read_only, wait)
        except duckdb.Error as exc:
            if not copied or "lock" in str(exc).lower():
                raise
            # a copy DuckDB cannot open (a damaged template): start again without one
            _discard(path)
            _discard(_template_path() or path)
            return _open_for_writing(path)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise WarehouseLocked(_lock_message(path, exc)) from None
        raise GroundworkError(f"cannot open warehouse {path}: {exc}") from None
    except duckdb.Error as exc:
        raise GroundworkError(f"cannot open warehouse {path}: {exc}") from None


def connect(path: str | Path = DEFAULT_PATH, read_only: bool = False, create: bool = True,
            comments: bool | None = None, wait: float | None = None,
            memory: str | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse; raise WarehouseLocked (one-line message) when another process still
    holds it after ``wait`` seconds (``lock_wait()`` when None; README.md#sharing-the-warehouse).

    ``path`` may be ``:memory:`` for a throwaway warehouse (drop-in lint/verify, tests); unless
    ``comments`` says otherwise it gets every table and view but not their documentation comments
    (``apply_schema(comments=False)``), which would be most of the cost of creating it.
    A file opened for writing is attached with ``attach_options`` (``_open_for_writing``): take
    further cursors with ``cursor(con)``, not ``con.cursor()``.

    Refused with one line, the file untouched: a file that is not a groundwork warehouse
    (NotAWarehouse), a warehouse of a newer groundwork (NewerWarehouse), a missing file when
    ``read_only`` or not ``create``. Opened for writing, an older warehouse is migrated forward
    (``apply_schema``). A file this call created is removed again when it fails.

    ``memory``: DuckDB's memory_limit for the connection to a file (``job_memory()``), set before
    anything is read; an in-memory warehouse keeps DuckDB's default (its data counts against the
    limit).
    """
    path = str(path)
    wait = lock_wait() if wait is None else wait
    if path == ":memory:":
        con = duckdb.connect(path)
        apply_schema(con, comments=bool(comments))
        return con
    existed = _existing_file(path)
    if not existed and (read_only or not create):
        raise GroundworkError(f"warehouse {path} does not exist; run `groundwork ingest RUNS_DIR --warehouse {shlex.quote(str(path))}` first")
    if existed and not read_only and os.path.exists(f"{path}.wal"):
        # Opened for writing, DuckDB would replay the log into the file and checkpoint it on
        # closing: look read-only first, so that another application's file is never written.
        probe = _open(path, True, False, wait)
        try:
            check_version(probe, path)
        finally:
            probe.close()
    copied = not existed and (comments is None or comments) and _copy_template(Path(path))
    try:
        con = _open(path, read_only, copied, wait)
    except WarehouseLocked:
        raise  # another process's file
    except BaseException:
        if not existed:
            _discard(path)
        raise
    try:
        version = check_version(con, path)
        if read_only and version is None:
            raise GroundworkError(f"warehouse {path} is an empty DuckDB database; run `groundwork ingest RUNS_DIR --warehouse {shlex.quote(str(path))}` first")
        if memory is not None:
            con.execute("SET memory_limit = $limit", {"limit": memory})
        if not read_only:
            apply_schema(con, comments=True if comments is None else comments, path=path)
    except BaseException:
        con.close()
        if not existed:
            _discard(path)
        raise
    return con
