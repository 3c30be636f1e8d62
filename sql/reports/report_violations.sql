-- report_violations: lint_violations without the finding codes of severity off
-- (report_hidden_codes): every report query reads violations from this temp view, so a code set
-- to off is left out of the reports and metrics while its rows stay in the warehouse.
-- No parameters.
SELECT v.* FROM lint_violations v WHERE v.code NOT IN (SELECT code FROM report_hidden_codes)
