-- code: R2
-- title: An input-grounded agent cites only its input, in the payload and in the evidence
-- kind: rule
-- step: 8
-- modes: input_only, none
-- needs_succeeded: false
-- order: part, ord
-- docs/rules.md#r2: every grounded pair (label payload), then every evidence pair (label evidence),
-- that is not exactly the input pair (input:<invocation_id>, root dd.input_hash).
-- ref_json (the reference's raw JSON where its source_id holds U+FFFD) lets the message repr a
-- source id exactly where the VARCHAR lost a lone surrogate (docs/rules.md#repr).
SELECT g.invocation_id, 0 AS part, g.ord, 'payload' AS label,
       g.source_id, CAST(NULL AS STRING) AS source_id_json, g.ref_json, g.content_hash, j.input_sid, j.input_hash
FROM lint_grounded g
JOIN lint_judged j USING (run_key)
WHERE j.mode IN ('input_only', 'none')
  AND NOT (g.source_id = j.input_sid AND g.content_hash = j.input_hash)
UNION ALL
SELECT e.invocation_id, 1, e.ord, 'evidence',
       e.source_id, e.source_id_json, CAST(NULL AS STRING), e.content_hash, j.input_sid, j.input_hash
FROM lint_evidence e
JOIN lint_judged j USING (run_key)
WHERE j.mode IN ('input_only', 'none')
  AND NOT (e.source_id = j.input_sid AND e.content_hash = j.input_hash)
