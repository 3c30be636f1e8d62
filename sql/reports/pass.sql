-- pass: the lints row of one lint or verify pass (ids, times, rule-set hash, counts).
-- $lint: the pass.
SELECT lint_id, kind, started_at, finished_at, ruleset_hash, rules, tool_version, sources_path, runs_checked, runs_failed
FROM lints WHERE lint_id = $lint
