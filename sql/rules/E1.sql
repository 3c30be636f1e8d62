-- code: E1
-- title: Evidence content hashes to its content_hash under its canonicalisation
-- kind: rule
-- step: 7
-- modes: all
-- needs_succeeded: false
-- order: ord
-- docs/rules.md#e1: items whose content is absent or null are not checked. Ingest computed the
-- hash (computed_hash) or the workbench's error text (canonical_error).
SELECT e.invocation_id, e.ord,
       CASE WHEN e.content_type <> 'object' THEN 'not_object'
            WHEN e.computed_hash IS NULL THEN 'hash_error'
            ELSE 'mismatch' END AS problem,
       e.source_id_json, e.canonical_error, e.content_hash, e.canonicalisation_json
FROM lint_evidence e
JOIN lint_judged j USING (run_key)
WHERE j.mode_valid
  AND e.content_type IS NOT NULL
  AND (e.content_type <> 'object' OR e.computed_hash IS NULL OR e.computed_hash <> e.content_hash)
