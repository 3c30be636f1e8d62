-- title: Evidence never independently verified
-- description: Evidence items the source check looks at (view source_check_items: input: and
--   invocation: items of attested modes are left to R2/D1/D2) that no pinned copy ever loaded
--   into the warehouse confirms, with the reason. An item is confirmed when a copy serving its
--   snapshot_ref holds its source id and the record hashes to its content_hash.
-- param: agent_id (optional) — only runs of this agent (all agents when omitted)
WITH candidates AS (
    SELECT
        i.invocation_id, i.ord, i.agent_id, i.source_id, i.snapshot_ref, i.canonicalisation,
        i.content_hash, c.copy_id, rec.record_id,
        CASE
            WHEN i.canonicalisation = 'json-sorted-utf8-v1' THEN rec.hash_fairsharing
            WHEN i.canonicalisation IN ('dd-json-document-v1', 'dd-input-json-v1', 'dd-envelope-json-v1')
                THEN rec.hash_identity
        END AS copy_hash
    FROM source_check_items i
    LEFT JOIN (SELECT DISTINCT snapshot_ref, copy_id FROM source_refs) c ON c.snapshot_ref = i.snapshot_ref
    LEFT JOIN source_records rec ON rec.copy_id = c.copy_id AND rec.record_id = i.source_id
), per_item AS (
    SELECT
        invocation_id, ord, agent_id, source_id, snapshot_ref, canonicalisation, content_hash,
        COUNT(copy_id) AS copies,
        COUNT(record_id) AS copies_with_record,
        COUNT(*) FILTER (WHERE copy_hash = content_hash) AS confirmations
    FROM candidates
    GROUP BY invocation_id, ord, agent_id, source_id, snapshot_ref, canonicalisation, content_hash
)
SELECT
    invocation_id,
    agent_id,
    ord AS evidence_ord,
    source_id,
    snapshot_ref,
    canonicalisation,
    CASE
        WHEN copies = 0 THEN 'no pinned copy serves this snapshot_ref'
        WHEN copies_with_record = 0 THEN 'no pinned copy holds this source id'
        WHEN canonicalisation NOT IN ('json-sorted-utf8-v1', 'dd-json-document-v1', 'dd-input-json-v1', 'dd-envelope-json-v1')
            THEN 'unknown canonicalisation'
        ELSE 'the pinned record hashes differently'
    END AS reason
FROM per_item
WHERE confirmations = 0
  AND ($agent_id IS NULL OR agent_id = $agent_id)
ORDER BY source_id, invocation_id, evidence_ord
