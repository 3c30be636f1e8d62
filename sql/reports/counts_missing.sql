-- counts_missing: the finished nightlies before $nightly with a lint pass whose per-nightly rows
-- (nightly_failing, nightly_agent_counts, nightly_rule_counts) were never recorded (nightly_counted):
-- those of a warehouse written by an older groundwork.
SELECT nightly_id FROM nightlies
WHERE exit_status IN (0, 1) AND nightly_id < $nightly AND lint_id IS NOT NULL
  AND nightly_id NOT IN (SELECT nightly_id FROM nightly_counted)
ORDER BY nightly_id
