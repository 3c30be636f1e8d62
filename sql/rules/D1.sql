-- code: D1
-- title: A delegation payload rests only on the input or on delegations the conductor recorded
-- kind: rule
-- step: 8
-- modes: delegation
-- needs_succeeded: false
-- order: ord
-- docs/rules.md#d1: each grounded pair not in citable (input pair and recorded delegations).
-- ref_json (the reference's raw JSON where its source_id holds U+FFFD) lets the message repr a
-- source id exactly where the VARCHAR lost a lone surrogate (docs/rules.md#repr).
SELECT g.invocation_id, g.ord, g.source_id, g.content_hash, g.ref_json
FROM lint_grounded g
JOIN lint_judged j USING (run_key)
WHERE j.mode = 'delegation'
  AND NOT EXISTS (SELECT 1 FROM lint_citable c
                  WHERE c.run_key = g.run_key
                    AND c.source_id = g.source_id AND c.content_hash = g.content_hash)
