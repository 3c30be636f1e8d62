-- code: GW3
-- title: A delegation's content_hash is the dd-envelope-json-v1 hash of the stored child envelope
-- kind: finding
-- modes: all
-- needs_succeeded: false
-- order: ord
-- docs/rules.md#gw3: the workbench trusts the conductor's hash; we check it against the
-- child run in the archive (runs.envelope_hash). Children not in the archive are GW4.
SELECT d.invocation_id, d.ord, d.delegated_invocation_id, d.content_hash,
       child.envelope_hash AS child_envelope_hash
FROM lint_delegations d
JOIN runs child ON child.invocation_id = d.delegated_invocation_id
WHERE NOT coalesce(child.missing, false)
  AND child.envelope_hash IS DISTINCT FROM d.content_hash
