-- code: G3
-- title: Every evidence hash was retrieved in this invocation
-- kind: rule
-- step: 8
-- modes: retrieval
-- needs_succeeded: false
-- order: ord
-- docs/rules.md#g3: the hash alone is compared (the source id is not). source_id_json lets the
-- message repr a string id exactly (a lone surrogate cannot live in a VARCHAR).
SELECT e.invocation_id, e.ord, e.source_id, e.source_id_json, e.content_hash
FROM lint_evidence e
JOIN lint_judged j USING (run_key)
WHERE j.mode = 'retrieval'
  AND NOT EXISTS (SELECT 1 FROM lint_retrieved r
                  WHERE r.run_key = e.run_key AND r.content_hash = e.content_hash)
