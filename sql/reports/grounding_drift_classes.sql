-- grounding_drift_classes: runs whose recorded grounding.txt differs from the lint pass's text,
-- per class of the view recorded_drift (withheld, rules_changed, recorded_pass_fails_today, other).
-- $lint: the lint pass.
SELECT drift, COUNT(*) AS n FROM recorded_drift WHERE lint_id = $lint GROUP BY drift
