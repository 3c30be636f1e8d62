"""The ingest pipeline without its parser: what `groundwork ingest` costs before any parsing.

Usage: pipeline_floor.py RUNS_DIR WAREHOUSE

The same machinery as a real ingest (parser processes, root listing, listing and fingerprinting
each run folder, reading every file, Arrow IPC back to the writer thread, batched DuckDB
transactions and checkpoints, a fresh warehouse with the full schema), except that each file's
bytes are stored as one BLOB row instead of being parsed into typed rows. bench.py runs it to show
how much of an ingest's time is parsing and how much is the pipeline around it.
"""

from __future__ import annotations

import sys

import pyarrow as pa

from groundwork.ingest import work
from groundwork.ingest.scan import list_and_read

TABLE = "raw_files"
COLUMNS = "invocation_id, file_name, data"


def raw_chunk(root, root_real, ingest_id, items, rehash, links=frozenset()):
    """process_chunk's stand-in: list, fingerprint and read each run folder; no parsing."""
    res = work.ChunkResult()
    names, files, data = [], [], []
    for name, _stored in items:
        listing = list_and_read(root, root_real, name, name in links)
        listing.files_fingerprint()
        listing.content_fingerprint()
        for rel, f in listing.files.items():
            names.append(name)
            files.append(rel)
            data.append(f.data)
        res.loaded.append(name)
    table = pa.table({"invocation_id": pa.array(names, pa.string()), "file_name": pa.array(files, pa.string()),
                      "data": pa.array(data, pa.binary())})
    res.tables = {TABLE: work._to_ipc(table)}
    res.rows = table.num_rows
    return res


def main(runs_dir: str, warehouse: str) -> None:
    import groundwork.ingest.load as load
    from groundwork.core.warehouse import connect
    from groundwork.ingest import ingest_archive, parsers
    from pipeline_floor import raw_chunk as chunk  # by module name, so the parser processes find it

    load.process_chunk = chunk
    load.RUN_TABLES = (TABLE,)
    column_list = load.column_list
    load.column_list = lambda table: COLUMNS if table == TABLE else column_list(table)
    with parsers(None, runs_dir) as pool:
        con = connect(warehouse)
        con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (invocation_id VARCHAR, file_name VARCHAR, data BLOB)")
        ingest_archive(con, runs_dir, parsers=pool)
        con.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
