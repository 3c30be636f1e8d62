"""INSERT of Python rows with bound parameters: for the few rows of one run or one small
source copy, where building Arrow tables would cost a process that never needs pyarrow more
than the insert itself (the drop-in lint and verify, groundwork.jobs.dropin)."""

from __future__ import annotations

# Rows per INSERT statement (its parameters are bound one by one, so a statement stays small).
CHUNK_ROWS = 500
# Above this many rows an insert goes through Arrow instead: binding costs ~65 us a row (8
# columns), an Arrow table ~1 us a row once pyarrow is imported (~0.08 s of a new process).
ARROW_ROWS = 1000


def insert_values(con, table: str, names, rows, placeholders: dict[str, str] | None = None) -> None:
    """Append ``rows`` (tuples, one value per column of ``names``) to ``table``, each value cast
    by DuckDB to its column's type; ``placeholders`` gives a column's SQL other than ``?`` (e.g.
    ``make_timestamp(?)`` for microseconds since the epoch)."""
    placeholders = placeholders or {}
    one = "(" + ", ".join(placeholders.get(name, "?") for name in names) + ")"
    head = f"INSERT INTO {table} ({', '.join(names)}) VALUES "
    for start in range(0, len(rows), CHUNK_ROWS):
        chunk = rows[start:start + CHUNK_ROWS]
        con.execute(head + ", ".join([one] * len(chunk)), [value for row in chunk for value in row])
