-- grounding_drift_classes: runs whose recorded grounding.txt differs from the lint pass's text,
-- per class of the view lint_drift (recorded_drift's classes for one pass: withheld, rules_changed,
-- recorded_pass_fails_today, other), as report_grounding_drift (grounding_drift.sql) has the pass's rows.
SELECT drift, COUNT(*) AS n FROM report_grounding_drift GROUP BY drift
