-- code: GW1
-- title: No span-id cycle is reachable from invoke_agent (the workbench linter would never return)
-- kind: finding
-- modes: all
-- needs_succeeded: false
-- order:
-- docs/rules.md#gw1. Such a run has no workbench verdict: lint reports it as unlintable.
SELECT c.invocation_id, c.ord, c.line_no, c.name_json, c.span_id
FROM lint_cycles c
