-- rules_by_nightly: violations per pass and code of the nightlies $nightlies (a list of nightly
-- ids), and the runs with one (the table nightly_rule_counts), without the codes of severity off
-- (report_hidden_codes).
SELECT DISTINCT lint_id, code, violations AS n, runs
FROM nightly_rule_counts
WHERE nightly_id IN (SELECT UNNEST($nightlies)) AND code NOT IN (SELECT code FROM report_hidden_codes)
