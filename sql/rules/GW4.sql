-- code: GW4
-- title: Every delegated child run is in the archive
-- kind: finding
-- modes: all
-- needs_succeeded: false
-- order: ord
-- A recorded delegation whose child run folder was never ingested, or is gone from disk.
SELECT d.invocation_id, d.ord, d.delegated_invocation_id,
       child.invocation_id IS NOT NULL AS was_ingested
FROM lint_delegations d
LEFT JOIN runs child ON child.invocation_id = d.delegated_invocation_id
WHERE child.invocation_id IS NULL OR coalesce(child.missing, false)
