-- code: D3
-- title: A succeeded delegation envelope cites its input in evidence
-- kind: rule
-- step: 8
-- modes: delegation
-- needs_succeeded: true
-- order:
-- Spec 6.3 D3: the input pair must be among the evidence pairs.
SELECT j.invocation_id
FROM lint_judged j
WHERE j.mode = 'delegation' AND j.succeeded
  AND NOT EXISTS (SELECT 1 FROM lint_evidence e
                  WHERE e.run_key = j.run_key
                    AND e.source_id = j.input_sid AND e.content_hash = j.input_hash)
