-- code: GW2
-- title: No two span records share a span id (the workbench counts each copy's children again)
-- kind: finding
-- modes: all
-- needs_succeeded: false
-- order: first_ord
-- Spec 6.7: duplicates inflate counts and repeat G1 messages; the workbench says nothing.
SELECT invocation_id, span_id, min(ord) AS first_ord, count(*) AS copies,
       string_agg(CAST(line_no AS VARCHAR), ', ' ORDER BY ord) AS lines
FROM lint_spans
GROUP BY invocation_id, span_id
HAVING count(*) > 1
