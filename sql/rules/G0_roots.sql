-- code: G0
-- title: The trace has exactly one invoke_agent span (otherwise this is the run's only violation)
-- kind: rule
-- step: 1
-- modes: all
-- needs_succeeded: false
-- order:
-- docs/rules.md#g0_roots. Every other rule reads lint_judged, which holds only runs with exactly one
-- root, so a run reported here gets no other violation and counts 0.
-- lint_root holds exactly the runs with one root; the others' invoke_agent spans are counted.
WITH off AS (
    SELECT r.invocation_id, r.run_key
    FROM lint_runs r
    WHERE NOT EXISTS (SELECT 1 FROM lint_root o WHERE o.run_key = r.run_key)
)
SELECT o.invocation_id, count(s.ord) AS found
FROM off o
LEFT JOIN lint_spans s ON s.run_key = o.run_key AND s.name = 'invoke_agent'
GROUP BY o.run_key, o.invocation_id
