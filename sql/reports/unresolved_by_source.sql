-- unresolved_by_source: the $top source ids with the most evidence items the verify pass found no
-- independent copy for (items, runs), and in groups the number of source ids in all.
-- $verify: the verify pass; $top: how many.
SELECT COALESCE(e.source_id, regexp_extract(u.item, '^(.*) \([^()]*\)$', 1)) AS source_id,
       COUNT(*) AS unresolved_items, COUNT(DISTINCT u.invocation_id) AS runs,
       COUNT(*) OVER () AS groups
FROM verify_unresolved u
LEFT JOIN evidence e ON e.invocation_id = u.invocation_id AND e.ord = u.seq
                     AND u.item = e.source_id || ' (' || e.snapshot_ref || ')'
WHERE u.lint_id = $verify
GROUP BY ALL
ORDER BY unresolved_items DESC, source_id
LIMIT $top
