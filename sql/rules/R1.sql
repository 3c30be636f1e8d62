-- code: R1
-- title: An agent that declared no retrieval has no retrieval span
-- kind: rule
-- step: 8
-- modes: input_only, none, delegation
-- needs_succeeded: false
-- order:
-- docs/rules.md#r1: one violation counting every retrieval descendant (duplicates included).
SELECT j.invocation_id, c.retrieval_count
FROM lint_judged j
JOIN lint_counts c USING (run_key)
WHERE j.mode IN ('input_only', 'none', 'delegation') AND c.retrieval_count > 0
