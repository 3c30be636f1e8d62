-- code: D3
-- title: A succeeded delegation envelope cites its input in evidence
-- kind: rule
-- step: 8
-- modes: delegation
-- needs_succeeded: true
-- order:
-- docs/rules.md#d3: the input pair must be among the evidence pairs. (An anti-join written as a
-- LEFT JOIN: the few delegation runs are hashed, not the whole evidence list.)
SELECT j.invocation_id
FROM lint_judged j
LEFT JOIN lint_evidence e
       ON e.run_key = j.run_key AND e.source_id = j.input_sid AND e.content_hash = j.input_hash
WHERE j.mode = 'delegation' AND j.succeeded AND e.run_key IS NULL
