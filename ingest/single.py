"""One spans file and envelope from anywhere (not in an archive) as one run's rows, the way
ingest parses a run folder: ``run_rows`` is what ``ingest.load.load_single`` writes, and
``insert_rows`` writes them without Arrow.

The drop-in lint and verify (groundwork.jobs.dropin) are a whole process per run: they load the
rows into an empty in-memory warehouse with ``insert_rows`` (bound parameters), so that process
does not import pyarrow (~0.1 s of its start) unless the run is large.
"""

from __future__ import annotations

import json
import os

from groundwork.core.jsontext import decode_utf8, vstr
from groundwork.core.values import ARROW_ROWS, insert_values
from groundwork.ingest import issues as K
from groundwork.ingest.parse import parse_run
from groundwork.ingest.scan import FileEntry, RunListing, read_entry
from groundwork.ingest.tables import COLUMN_TYPES, RUN_TABLES, RowSet, check_fields, column_list


def run_rows(spans_path, envelope_path, request_path=None) -> tuple[str, RowSet]:
    """The key (runs.invocation_id) and the rows of one spans file + envelope (+ request), read
    and parsed as a run folder's files are (``parse_run``), for a drop-in lint of files that are
    not in an archive (like ``workbench lint SPANS ENVELOPE``).

    The run is keyed by the envelope's invocation_id when it is a string, else by the envelope
    path. Issues name the files as given; a file that was not given has none, and the run has
    no run_files rows.
    """
    listing = RunListing("")
    for role, p in (("spans.jsonl", spans_path), ("envelope.json", envelope_path), ("request.json", request_path)):
        if p is None:
            continue
        if not os.path.exists(p):
            continue
        f = FileEntry(role)
        read_entry(os.fspath(p), f)  # as a run folder's files are read: bounded, no FIFO waited on
        if f.error is not None and f.error[0] == K.UNREADABLE:
            f.error = (K.UNREADABLE, f.error[1].replace("cannot read:", f"cannot read {p}:", 1)
                       if f.error[1].startswith("cannot read:") else f"{p}: {f.error[1]}")
        listing.files[role] = f
    key = None
    env = listing.files.get("envelope.json")
    if env is not None and env.data is not None:
        try:
            # json.loads, as the workbench reads it (jsontext.loads, the same result, would
            # import orjson for this one document: ~13 ms of a drop-in's imports)
            doc = json.loads(decode_utf8(env.data)[0])
            if isinstance(doc, dict) and isinstance(doc.get("invocation_id"), str):
                key = vstr(doc["invocation_id"])
        except (ValueError, RecursionError):
            pass
    if key is None:
        key = vstr(os.path.abspath(str(envelope_path)))
    listing.name = key
    rows, _ = parse_run(listing, None, folder_check=False, run_path="")
    # issue paths name the files as given
    given = {"spans.jsonl": str(spans_path), "envelope.json": str(envelope_path),
             "request.json": str(request_path) if request_path else "request.json"}
    not_given = {"grounding.txt"} | ({"request.json"} if request_path is None else set())
    issues = [dict(zip(rows.fields.get("ingest_issues", ()), row)) for row in rows.rows["ingest_issues"]]
    rows.rows["ingest_issues"] = [tuple({**i, "path": given.get(i["path"], i["path"])}.values())
                                  for i in issues if i["path"] not in not_given]
    rows.rows["run_files"] = []
    return key, rows


def insert_rows(con, rows: RowSet) -> None:
    """Append ``rows`` to the run tables of ``con`` with bound parameters: the values Arrow
    would carry (ingest.tables.to_arrow), each cast by DuckDB to its column's type (a
    timestamp is given as microseconds since the epoch, as Arrow's timestamp("us") takes it).
    A run of more than ``ARROW_ROWS`` rows goes through Arrow tables (``RowSet.arrow``) instead."""
    if rows.count() > ARROW_ROWS:
        for table in RUN_TABLES:
            if rows.rows.get(table):
                con.register("_gw_rows", rows.arrow(table))
                try:
                    con.execute(f"INSERT INTO {table} ({column_list(table)}) SELECT {column_list(table)} FROM _gw_rows")
                finally:
                    con.unregister("_gw_rows")
        return
    for table in RUN_TABLES:
        found = rows.rows.get(table)
        if found:
            fields = rows.fields.get(table, ())
            check_fields(table, fields)
            stamps = {name: "make_timestamp(?)" for name, code in COLUMN_TYPES[table] if code == "TS"}
            insert_values(con, table, fields, found, stamps)
