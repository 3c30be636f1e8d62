-- code: G0
-- title: The root span carries the envelope's grounding_mode, as a string
-- kind: rule
-- step: 4
-- modes: all
-- needs_succeeded: false
-- order:
-- docs/rules.md#g0_root_mode: exact equality, not stringified (a missing attribute prints None).
SELECT invocation_id, mode, root_mode_json
FROM lint_judged
WHERE mode_valid
  AND NOT (root_mode_is_string AND coalesce(root_mode = mode, false))
