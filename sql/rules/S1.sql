-- code: S1
-- title: Evidence cites a record its pinned source copy does not hold
-- kind: source
-- modes: all
-- needs_succeeded: false
-- order: ord
SELECT i.invocation_id,
       i.ord,
       'S1' AS code,
       i.source_id,
       i.source_id_json,
       i.snapshot_ref,
       i.snapshot_ref_json,
       i.content_hash,
       i.canonicalisation,
       CAST(NULL AS STRING) AS actual_hash,
       CAST(NULL AS STRING) AS hash_error
-- One row per evidence item whose snapshot_ref names a copy (under the sources.yaml being checked,
-- $config_id) that holds no record with the cited source_id.
FROM source_check_items i
JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = $config_id
LEFT JOIN source_records rec ON rec.copy_id = sr.copy_id AND rec.record_id = i.source_id
WHERE rec.record_id IS NULL
