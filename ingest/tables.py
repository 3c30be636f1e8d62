"""Column lists of the ingest tables (sql/schema/10_tables.sql is the DDL; tests check the two agree).

Rows are plain tuples, each kind with the names of its columns in its own order (``spans.FIELDS``,
``envelope.EVIDENCE_FIELDS``, ...: defined where the rows are built); ``RowSet`` gathers them per
table and ``to_arrow`` turns them into Arrow tables by column name, for
``INSERT INTO t (cols) SELECT cols FROM arrow``.

``COLUMN_TYPES`` names each column's type (S string, I int32, B int64, BOOL, TS timestamp in
microseconds, F float64, J JSON text) without pyarrow, which a drop-in lint of one run never
imports (groundwork.ingest.single); ``COLUMNS`` and ``SCHEMAS`` (the same columns with their
Arrow types) import it on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundwork.core import native
from groundwork.core.engine import arrow

if TYPE_CHECKING:   # annotations only: pyarrow is imported where a table is built
    import pyarrow as pa

S, I, B, BOOL, TS, F = "S", "I", "B", "BOOL", "TS", "F"
J = "J"  # DuckDB JSON columns are filled from VARCHAR text

COLUMN_TYPES: dict[str, list[tuple[str, str]]] = {
    "runs": [
        ("invocation_id", S), ("run_path", S), ("ingest_id", I), ("missing", BOOL),
        ("lintable", BOOL), ("unlintable_reason", S), ("verifiable", BOOL), ("unverifiable_reason", S),
        ("envelope_invocation_id", S), ("agent_id", S), ("agent_version", S), ("completed_at", TS),
        ("grounding_mode", S), ("grounding_mode_json", S), ("grounding_mode_truthy", BOOL),
        ("outcome_status", S), ("succeeded", BOOL), ("problem_type", S), ("withheld", BOOL),
        ("payload_type", S), ("payload_has_schema_class", BOOL), ("payload_schema_class_json", S),
        ("payload_has_grounded_on", BOOL), ("evidence_count", I), ("delegation_count", I),
        ("conversation_id", S), ("parent_invocation_id", S), ("telemetry_trace_id", S),
        ("envelope_hash", S), ("input_hash", S), ("issued_at", TS), ("span_format", S),
        ("span_count", I), ("recorded_grounding", S), ("recorded_sources", S),
        ("envelope_json", J), ("request_json", J),
        ("files_fingerprint", S), ("content_fingerprint", S), ("parser_version", I),
        ("outcome_problem", S), ("evidence_problem", S), ("delegations_problem", S),
    ],
    "spans": [
        ("invocation_id", S), ("ord", I), ("line_no", I), ("source_format", S), ("name", S),
        ("name_json", S), ("span_id", S), ("trace_id", S), ("parent_id", S),
        ("start_time", TS), ("end_time", TS),
        ("dd_operation", S), ("dd_agent_id", S), ("dd_source_id", S), ("dd_content_hash", S),
        ("dd_model_id", S), ("dd_input_tokens", S), ("dd_output_tokens", S), ("dd_outcome", S),
        ("dd_grounding_mode", S), ("dd_input_hash", S), ("dd_grounding_mode_json", S),
        ("dd_grounding_mode_is_string", BOOL), ("status_code", S), ("service_name", S),
        ("attributes", J), ("start_unix_nano", B), ("end_unix_nano", B),
        ("start_workbench_ns", F), ("end_workbench_ns", F),
    ],
    "payload_refs": [
        ("invocation_id", S), ("ord", I), ("path", S), ("kind", S), ("source_id", S),
        ("content_hash", S), ("value_json", S),
    ],
    "evidence": [
        ("invocation_id", S), ("ord", I), ("source_id", S), ("source_id_json", S),
        ("content_hash", S), ("canonicalisation", S), ("canonicalisation_json", S),
        ("snapshot_ref", S), ("source_uri", S), ("retrieved_at", S), ("hash_algorithm", S),
        ("content_type", S), ("content_json", J), ("computed_hash", S), ("canonical_error", S),
        ("item_type", S), ("item_json", S), ("snapshot_ref_json", S),
    ],
    "delegations": [
        ("invocation_id", S), ("ord", I), ("delegated_invocation_id", S), ("content_hash", S),
        ("delegated_agent_id", S), ("delegated_agent_version", S), ("delegated_status", S),
    ],
    "ingest_issues": [
        ("ingest_id", I), ("invocation_id", S), ("path", S), ("line", I), ("kind", S),
        ("message", S), ("effect", S),
    ],
    "run_files": [
        ("invocation_id", S), ("file_name", S), ("size", B), ("mtime_ns", B), ("sha256", S),
    ],
    "invocation_index": [
        ("line_no", I), ("invocation_id", S), ("agent_id", S), ("outcome_status", S),
        ("completed_at", TS), ("envelope_hash", S),
    ],
    "class_schemas": [
        ("digest", S), ("computed_digest", S), ("schema_json", J),
    ],
    "archive_files": [
        ("path", S), ("size", B), ("mtime_ns", B), ("sha256", S),
    ],
}

# tables holding the contents of one run (replaced whole when the run is reloaded)
RUN_TABLES = ("runs", "spans", "payload_refs", "evidence", "delegations", "run_files", "ingest_issues")

COLUMN_NAMES: dict[str, tuple[str, ...]] = {t: tuple(name for name, _ in cols) for t, cols in COLUMN_TYPES.items()}


def _arrow_type(pa, code: str):
    return {"S": pa.string(), "I": pa.int32(), "B": pa.int64(), "BOOL": pa.bool_(), "TS": pa.timestamp("us"),
            "F": pa.float64(), "J": pa.string()}[code]


def __getattr__(name: str):
    """``COLUMNS`` (each table's columns with their Arrow types) and ``SCHEMAS`` (Arrow schemas),
    made on first use."""
    if name not in ("COLUMNS", "SCHEMAS"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import pyarrow as pa

    columns = {t: [(n, _arrow_type(pa, code)) for n, code in cols] for t, cols in COLUMN_TYPES.items()}
    globals()["COLUMNS"] = columns
    globals()["SCHEMAS"] = {t: pa.schema(cols) for t, cols in columns.items()}
    return globals()[name]


class RowSet:
    """Rows per table (tuples) and the names of their columns (``fields``, one tuple per table)."""

    __slots__ = ("rows", "fields")

    def __init__(self, fields: dict[str, tuple[str, ...]] | None = None):
        """``fields``: the column names of the rows each table will hold, in their order."""
        self.rows: dict[str, list[tuple]] = {t: [] for t in RUN_TABLES}
        self.fields: dict[str, tuple[str, ...]] = dict(fields) if fields else {}

    def extend(self, other: "RowSet") -> None:
        known = self.fields
        for t, rows in other.rows.items():
            if rows:
                fields = other.fields.get(t, ())
                if known.setdefault(t, fields) is not fields:
                    self._same_fields(t, fields)
                self.rows.setdefault(t, []).extend(rows)

    def _same_fields(self, table: str, fields: tuple[str, ...]) -> None:
        known = self.fields.setdefault(table, fields)
        if known is not fields and known != fields:
            raise ValueError(f"{table} rows with columns {fields} joined to rows with {known}")

    def count(self) -> int:
        return sum(len(r) for r in self.rows.values())

    def arrow(self, table: str) -> pa.Table:
        return to_arrow(table, self.rows.get(table, []), self.fields.get(table, ()))


_checked: set[tuple[str, tuple[str, ...]]] = set()

# ingest/_columns_native.c's name of each column type (the Arrow buffers it builds)
NATIVE_KINDS = {S: "s", J: "s", I: "i", B: "l", TS: "l", BOOL: "b", F: "d"}
# the C path, or None (not built, or GROUNDWORK_NATIVE=off)
_columns_native = native.load("groundwork.ingest._columns_native")


def to_arrow(table: str, rows: list[tuple], fields: tuple[str, ...]) -> pa.Table:
    """The Arrow table of ``rows``, whose columns ``fields`` names in order (any order: each goes
    to its column by name; the fields must be exactly the table's columns).

    Each column's buffers are built by ingest/_columns_native.c when it is built (one pass in C
    over the row tuples, instead of pyarrow.array converting the transposed column value by
    value; a column it declines, pyarrow.array converts): the same table either way."""
    pa = arrow()  # with the duckdb package: the table is for DuckDB to scan

    schemas = globals().get("SCHEMAS") or __getattr__("SCHEMAS")
    if not rows:
        return schemas[table].empty_table()
    check_fields(table, fields)
    schema = schemas[table]
    c = _columns_native
    if c is None or type(rows) is not list:
        columns = dict(zip(fields, zip(*rows)))
        return pa.Table.from_arrays([pa.array(columns[f.name], type=f.type) for f in schema], schema=schema)
    n = len(rows)
    arrays = []
    for f, (_, code) in zip(schema, COLUMN_TYPES[table]):
        i = fields.index(f.name)
        got = c.column(rows, i, NATIVE_KINDS[code])
        if got is None:
            arrays.append(pa.array([r[i] for r in rows], type=f.type))
            continue
        nulls, validity, values, data = got
        buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(values)]
        if data is not None:
            buffers.append(pa.py_buffer(data))
        arrays.append(pa.Array.from_buffers(f.type, n, buffers, null_count=nulls))
    return pa.Table.from_arrays(arrays, schema=schema)


def check_fields(table: str, fields: tuple[str, ...]) -> None:
    """ValueError unless ``fields`` are exactly the columns of ``table`` (in any order)."""
    if (table, fields) not in _checked:
        names = COLUMN_NAMES[table]
        if len(fields) != len(names) or set(fields) != set(names):
            raise ValueError(f"{table} rows have the columns {fields}; the table has {tuple(names)}")
        _checked.add((table, fields))


def column_list(table: str) -> str:
    return ", ".join(COLUMN_NAMES[table])
