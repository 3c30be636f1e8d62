-- code: SU
-- title: evidence without an independent copy (unresolved; never a violation)
-- check: verify
-- kind: unresolved
-- spec: 5.4 step 4
-- One row per evidence item whose str(snapshot_ref) no entry of the loaded sources.yaml
-- (config_id) lists; item is the text the report prints: <sid> (<ref>). Filter on config_id.
SELECT c.config_id,
       i.invocation_id,
       i.ord,
       'SU' AS code,
       i.source_id,
       i.snapshot_ref,
       i.source_id || ' (' || i.snapshot_ref || ')' AS item
FROM source_check_items i
CROSS JOIN source_configs c
LEFT JOIN source_refs sr ON sr.config_id = c.config_id AND sr.snapshot_ref = i.snapshot_ref
WHERE sr.copy_id IS NULL
