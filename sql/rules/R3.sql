-- code: R3
-- title: A succeeded input-grounded envelope cites evidence
-- kind: rule
-- step: 8
-- modes: input_only, none
-- needs_succeeded: true
-- order:
-- docs/rules.md#r3: looks only at the evidence list (R2 checks what it cites).
SELECT invocation_id
FROM lint_judged
WHERE mode IN ('input_only', 'none') AND succeeded AND evidence_count = 0
