-- grounding_drift: the lint pass's rows of the view lint_drift (runs whose recorded grounding.txt
-- differs from the pass's text, classified). reports/data.py makes it the temp table
-- report_grounding_drift, which grounding_drift_classes and grounding_drift_examples read (the
-- view, over every verdict of the pass, is evaluated once).
-- $lint: the lint pass.
SELECT * FROM lint_drift WHERE lint_id = $lint
