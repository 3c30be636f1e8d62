-- code: N1
-- title: An agent that declared no model call has no chat span
-- kind: rule
-- step: 8
-- modes: none
-- needs_succeeded: false
-- order:
-- docs/rules.md#n1: one violation counting every chat descendant (duplicates included).
SELECT j.invocation_id, c.chat_count
FROM lint_judged j
JOIN lint_counts c USING (run_key)
WHERE j.mode = 'none' AND c.chat_count > 0
