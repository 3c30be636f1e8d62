"""Investigation: read-only ad-hoc SQL (session), output formats, saved queries, Parquet export
and the schema documentation. Imports groundwork.core (and the checks' public API)."""
