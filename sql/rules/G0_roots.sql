-- code: G0
-- title: The trace has exactly one invoke_agent span (otherwise this is the run's only violation)
-- kind: rule
-- step: 1
-- modes: all
-- needs_succeeded: false
-- order:
-- Spec 6.2 step 1. Every other rule reads lint_judged, which holds only runs with exactly one
-- root, so a run reported here gets no other violation and counts 0.
SELECT r.invocation_id,
       coalesce(n.roots, 0) AS found
FROM lint_runs r
LEFT JOIN (SELECT invocation_id, count(*) AS roots
           FROM lint_spans
           WHERE name = 'invoke_agent'
           GROUP BY invocation_id) n USING (invocation_id)
WHERE coalesce(n.roots, 0) <> 1
