-- grounding_drift_classes: runs whose recorded grounding.txt differs from the lint pass's text,
-- per class of the view lint_drift (recorded_drift's classes for one pass: withheld, rules_changed,
-- recorded_pass_fails_today, other).
-- $lint: the lint pass.
SELECT drift, COUNT(*) AS n FROM lint_drift WHERE lint_id = $lint GROUP BY drift
