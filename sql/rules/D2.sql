-- code: D2
-- title: Delegation evidence is only the input or delegations the conductor recorded
-- kind: rule
-- step: 8
-- modes: delegation
-- needs_succeeded: false
-- order: ord
-- docs/rules.md#d2: each evidence pair not in citable.
SELECT e.invocation_id, e.ord, e.source_id, e.source_id_json, e.content_hash
FROM lint_evidence e
JOIN lint_judged j USING (run_key)
WHERE j.mode = 'delegation'
  AND NOT EXISTS (SELECT 1 FROM lint_citable c
                  WHERE c.run_key = e.run_key
                    AND c.source_id = e.source_id AND c.content_hash = e.content_hash)
