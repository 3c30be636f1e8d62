"""Write a streamed query result as table, csv, json, jsonl or markdown, one batch at a time."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import enum
from typing import Callable, Iterator, TextIO

import orjson

from groundwork.core.escape import md, visible
from groundwork.investigate.session import Result

TABLE_SAMPLE_ROWS = 1000
_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL")


class Format(str, enum.Enum):
    """Output formats of `groundwork sql` and `groundwork query`."""

    table = "table"
    csv = "csv"
    json = "json"
    jsonl = "jsonl"
    markdown = "markdown"


def is_numeric(type_name: str) -> bool:
    """True for DuckDB numeric types (right-aligned in tables)."""
    return type_name.split("(")[0] in _NUMERIC


def text(value) -> str:
    """Render one value as DuckDB's shell would (NULL handled by the caller).

    >>> text(True), text(dt.datetime(2026, 1, 2, 3, 4, 5)), text([1, 'a'])
    ('true', '2026-01-02 03:04:05', '[1, a]')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join("NULL" if v is None else text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {'NULL' if v is None else text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _json_default(value):
    """What orjson does not write itself: a DECIMAL as its exact digits (a JSON number of any
    precision, never rounded through a float), an INTERVAL or a BLOB as its text."""
    if isinstance(value, decimal.Decimal):
        return orjson.Fragment(str(value).encode("ascii"))
    if isinstance(value, (dt.timedelta, bytes, bytearray)):
        return str(value)
    raise TypeError


def _big_ints_exact(value):
    """``value`` with every integer beyond 64 bits (a HUGEINT), at any depth, as its exact digits
    (orjson writes integers of 64 bits only)."""
    if type(value) is int and not -2**63 <= value < 2**64:
        return orjson.Fragment(str(value).encode("ascii"))
    if isinstance(value, list):
        return [_big_ints_exact(v) for v in value]
    if isinstance(value, dict):
        return {k: _big_ints_exact(v) for k, v in value.items()}
    return value


def unique_keys(columns: list[str]) -> list[str]:
    """Column names as JSON object keys: a repeated name gets ``_2``, ``_3``, ... (the first
    free one), so no column is lost (``SELECT 1 AS a, 2 AS a``)."""
    seen: set[str] = set()
    out = []
    for name in columns:
        key, n = name, 1
        while key in seen:
            n += 1
            key = f"{name}_{n}"
        seen.add(key)
        out.append(key)
    return out


def _json_row(columns: list[str], types: list[str]) -> Callable[[tuple], bytes]:
    """Return a function turning a row into a JSON object (keys: ``unique_keys``); JSON columns
    are embedded as values."""
    json_cols = {i for i, t in enumerate(types) if t == "JSON"}
    columns = unique_keys(columns)

    def convert(row: tuple) -> bytes:
        obj = {}
        for i, (name, value) in enumerate(zip(columns, row)):
            if i in json_cols and value is not None:
                value = orjson.Fragment(value.encode("utf-8"))
            obj[name] = value
        # NaN and infinities are written as null (JSON has neither), at any depth
        try:
            return orjson.dumps(obj, default=_json_default, option=orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError:  # an integer beyond 64 bits
            return orjson.dumps(_big_ints_exact(obj), default=_json_default, option=orjson.OPT_NON_STR_KEYS)

    return convert


def _cell(value, width: int) -> str:
    """One table cell on one line: newline, CR and tab as \\n \\r \\t, every other control,
    format or separator character (a terminal escape, U+202E) as a visible escape."""
    s = "NULL" if value is None else text(value)
    s = visible(s.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t"))
    return s if len(s) <= width else s[: max(width - 1, 0)] + "…"


def write_table(result: Result, out: TextIO, max_width: int = 40) -> int:
    """Aligned columns (widths from the first rows), cells cut at ``max_width``, then the row count."""
    rows_iter = _rows(result.batches)
    sample = []
    for row in rows_iter:
        sample.append(row)
        if len(sample) >= TABLE_SAMPLE_ROWS:
            break
    cols = [_cell(c, max_width) for c in result.columns]
    widths = [len(c) for c in cols]
    for row in sample:
        for i, v in enumerate(row):
            widths[i] = max(widths[i], len(_cell(v, max_width)))
    right = [is_numeric(t) for t in result.types]

    def line(cells: list[str]) -> str:
        parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)]
        return " | ".join(parts).rstrip()

    out.write(line(cols) + "\n")
    out.write("-+-".join("-" * w for w in widths) + "\n")
    count = 0
    for source in (sample, rows_iter):
        for row in source:
            out.write(line([_cell(v, w) for v, w in zip(row, widths)]) + "\n")
            count += 1
    out.write(f"({count} row{'' if count == 1 else 's'})\n")
    return count


def write_csv(result: Result, out: TextIO) -> int:
    """RFC 4180 CSV with a header line; NULL is an empty field. Lines end with LF; a row with a
    CR in a field has every field quoted (the csv module quotes only for LF then), so every
    field round-trips."""
    plain = csv.writer(out, lineterminator="\n")
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def put(cells: list[str]) -> None:
        (quoted if any("\r" in c for c in cells) else plain).writerow(cells)

    put(list(result.columns))
    count = 0
    for batch in result.batches:
        for row in batch:
            put(["" if v is None else text(v) for v in row])
        count += len(batch)
    return count


def write_jsonl(result: Result, out: TextIO) -> int:
    """One JSON object per line."""
    convert = _json_row(result.columns, result.types)
    count = 0
    for batch in result.batches:
        out.write("".join(convert(row).decode("utf-8") + "\n" for row in batch))
        count += len(batch)
    return count


def write_json(result: Result, out: TextIO) -> int:
    """One JSON array of objects, written row by row."""
    convert = _json_row(result.columns, result.types)
    count = 0
    out.write("[")
    for batch in result.batches:
        for row in batch:
            out.write(("\n" if count == 0 else ",\n") + convert(row).decode("utf-8"))
            count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def _md(value) -> str:
    """One Markdown table cell: line breaks (LF, CR or both) as <br>, other control, format and
    separator characters as visible escapes, and every character Markdown would read as syntax
    (pipe, backslash, link, emphasis, HTML, entity: escape.md) escaped, so a run's string is
    shown as it is, never as markup."""
    s = "" if value is None else text(value)
    lines = s.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "<br>".join(md(line) for line in lines)


def write_markdown(result: Result, out: TextIO) -> int:
    """A GitHub-flavoured Markdown table (numbers right-aligned)."""
    out.write("| " + " | ".join(_md(c) for c in result.columns) + " |\n")
    out.write("|" + "|".join("---:" if is_numeric(t) else "---" for t in result.types) + "|\n")
    count = 0
    for batch in result.batches:
        out.write("".join("| " + " | ".join(_md(v) for v in row) + " |\n" for row in batch))
        count += len(batch)
    return count


def _rows(batches: Iterator[list[tuple]]) -> Iterator[tuple]:
    for batch in batches:
        yield from batch


def write(result: Result, fmt: Format | str, out: TextIO, max_width: int = 40) -> int:
    """Write ``result`` to ``out`` in ``fmt``; return the number of rows written."""
    fmt = Format(fmt)
    if fmt is Format.table:
        return write_table(result, out, max_width)
    return {Format.csv: write_csv, Format.json: write_json, Format.jsonl: write_jsonl,
            Format.markdown: write_markdown}[fmt](result, out)

