-- rule_counts_from_history: per nightly of $nightlies (a list of nightly ids), per pass it ran
-- (lint and verify) and code, the violations and the runs with one (every code: severity off
-- included): the rows of nightly_rule_counts (docs/schema.md), for tonight's nightly as for
-- those recorded before the table existed.
SELECT n.nightly_id, v.lint_id, v.code, COUNT(*) AS violations, COUNT(DISTINCT v.invocation_id) AS runs
FROM nightlies n
JOIN lint_violations v ON v.lint_id = n.lint_id OR v.lint_id = n.verify_id
WHERE n.nightly_id IN (SELECT UNNEST($nightlies))
GROUP BY ALL
