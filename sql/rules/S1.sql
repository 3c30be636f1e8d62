-- code: S1
-- title: evidence cites a record its pinned source copy does not hold
-- check: verify
-- spec: 5.4 step 5
-- message: verify/messages.txt.j2
-- One row per evidence item whose snapshot_ref names a copy (under a loaded sources.yaml,
-- config_id) that has no record with the cited source_id. Filter on config_id.
SELECT sr.config_id,
       i.invocation_id,
       i.ord,
       'S1' AS code,
       i.source_id,
       i.snapshot_ref,
       i.content_hash,
       i.canonicalisation,
       CAST(NULL AS VARCHAR) AS actual_hash,
       CAST(NULL AS VARCHAR) AS hash_error
FROM source_check_items i
JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref
LEFT JOIN source_records rec ON rec.copy_id = sr.copy_id AND rec.record_id = i.source_id
WHERE rec.record_id IS NULL
