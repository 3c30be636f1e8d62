-- code: G0
-- title: The envelope declares a valid grounding_mode (otherwise this is the run's only violation)
-- kind: rule
-- step: 3
-- modes: all
-- needs_succeeded: false
-- order:
-- docs/rules.md#g0_mode: str(grounding_mode) must be one of the four modes. Every rule of steps 2 and
-- 4-8 requires mode_valid (or a named mode), so such a run gets only this violation.
SELECT invocation_id, declared_json
FROM lint_judged
WHERE NOT mode_valid
