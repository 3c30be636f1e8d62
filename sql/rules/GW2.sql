-- code: GW2
-- title: No two span records share a span id (the workbench counts each copy's children again)
-- kind: finding
-- modes: all
-- needs_succeeded: false
-- order: first_ord
-- docs/rules.md#span-tree: duplicates inflate counts and repeat G1 messages; the workbench says nothing.
-- lines: the copies' line numbers ascending, i.e. in file order. array_sort(array_agg(...)) reads
-- the same on DuckDB and Spark SQL; string_agg(... ORDER BY ...) is DuckDB's alone.
WITH duplicated AS (
    SELECT run_key, span_id
    FROM lint_spans
    GROUP BY run_key, span_id
    HAVING count(*) > 1
)
SELECT s.invocation_id, s.span_id, min(s.ord) AS first_ord, count(*) AS copies,
       array_sort(array_agg(s.line_no)) AS lines
FROM lint_spans s
JOIN duplicated d ON d.run_key = s.run_key AND d.span_id = s.span_id
GROUP BY s.run_key, s.invocation_id, s.span_id
