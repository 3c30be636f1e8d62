-- code: S2
-- title: Evidence content_hash does not match the pinned copy's record, or cannot be computed
-- kind: source
-- modes: all
-- needs_succeeded: false
-- order: ord
SELECT invocation_id, ord, 'S2' AS code, source_id, source_id_json, snapshot_ref, snapshot_ref_json, content_hash,
       canonicalisation, canonicalisation_json, actual_hash, hash_error
-- One row per evidence item whose cited record exists in the copy but whose hash under the
-- item's canonicalisation is unknown (unregistered name), cannot be computed (hash_error), or
-- differs from str(content_hash) (actual_hash = the record's hash). $config_id is the sources.yaml being checked.
FROM (
    SELECT i.invocation_id,
           i.ord,
           i.source_id,
           i.source_id_json,
           i.snapshot_ref,
           i.snapshot_ref_json,
           i.content_hash,
           i.canonicalisation,
           i.canonicalisation_json,
           CASE WHEN i.canonicalisation = 'json-sorted-utf8-v1' THEN rec.hash_fairsharing
                WHEN i.canonicalisation IN ('dd-envelope-json-v1', 'dd-input-json-v1', 'dd-json-document-v1')
                THEN rec.hash_identity END AS actual_hash,
           CASE WHEN i.canonicalisation = 'json-sorted-utf8-v1' THEN rec.hash_fairsharing_error
                WHEN i.canonicalisation IN ('dd-envelope-json-v1', 'dd-input-json-v1', 'dd-json-document-v1')
                THEN rec.hash_identity_error END AS hash_error,
           i.canonicalisation IN ('json-sorted-utf8-v1', 'dd-envelope-json-v1', 'dd-input-json-v1',
                                  'dd-json-document-v1') AS registered
    FROM source_check_items i
    JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = $config_id
    JOIN source_records rec ON rec.copy_id = sr.copy_id AND rec.record_id = i.source_id
) checked
WHERE NOT registered
   OR hash_error IS NOT NULL
   OR actual_hash <> content_hash
