-- code: G4
-- title: Every hash the payload rests on is in the evidence
-- kind: rule
-- step: 8
-- modes: retrieval, delegation
-- needs_succeeded: false
-- order: ord
-- docs/rules.md#g4: each grounded pair (with multiplicity) whose hash alone is not an evidence hash.
-- ref_json (the reference's raw JSON where its source_id holds U+FFFD) lets the message repr a
-- source id exactly where the VARCHAR lost a lone surrogate (docs/rules.md#repr).
SELECT g.invocation_id, g.ord, g.source_id, g.content_hash, g.ref_json
FROM lint_grounded g
JOIN lint_judged j USING (run_key)
WHERE j.mode IN ('retrieval', 'delegation')
  AND NOT EXISTS (SELECT 1 FROM lint_evidence e
                  WHERE e.run_key = g.run_key AND e.content_hash = g.content_hash)
