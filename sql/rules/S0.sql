-- code: S0
-- title: Evidence without an independent copy: unresolved, never a violation
-- kind: source
-- modes: all
-- needs_succeeded: false
-- order: ord
SELECT i.invocation_id,
       i.ord,
       i.source_id,
       i.snapshot_ref,
       i.source_id || ' (' || i.snapshot_ref || ')' AS item
-- One row per evidence item whose str(snapshot_ref) no entry of the sources.yaml being checked
-- ($config_id, see source_configs) lists. item is the text the report prints: <sid> (<ref>), the
-- ref printed plainly (None when absent).
FROM source_check_items i
LEFT JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = $config_id
WHERE sr.copy_id IS NULL
