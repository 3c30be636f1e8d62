-- pass_rules: the rule codes (comma-separated) check pass $pass_id ran.
SELECT rules FROM lints WHERE lint_id = $pass_id
