-- code: G2
-- title: The payload rests only on records retrieved in this invocation, and on something when it succeeded
-- kind: rule
-- step: 8
-- modes: retrieval
-- needs_succeeded: partly
-- order: ord
-- docs/rules.md#g2: (a) every grounded pair, with multiplicity, must equal the pair of one retrieval
-- span; (b) a succeeded envelope with a payload but no well-formed reference rests on nothing.
-- ref_json (the reference's raw JSON where its source_id holds U+FFFD) lets the message repr a
-- source id exactly where the VARCHAR lost a lone surrogate (docs/rules.md#repr).
SELECT g.invocation_id, g.ord, 'not_retrieved' AS problem, g.source_id, g.content_hash, g.ref_json
FROM lint_grounded g
JOIN lint_judged j USING (run_key)
WHERE j.mode = 'retrieval'
  AND NOT EXISTS (SELECT 1 FROM lint_retrieved r
                  WHERE r.run_key = g.run_key AND r.source_id = g.source_id AND r.content_hash = g.content_hash)
UNION ALL
SELECT j.invocation_id, -1, 'rests_on_nothing', NULL, NULL, NULL
FROM lint_judged j
WHERE j.mode = 'retrieval' AND j.succeeded AND j.payload_type IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM lint_grounded g WHERE g.run_key = j.run_key)
