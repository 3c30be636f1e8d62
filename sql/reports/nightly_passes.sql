-- nightly_passes: the passes of nightly $nightly and of the finished nightly it is compared with
-- (the view nightly_passes).
SELECT lint_id, verify_id, baseline_nightly_id, baseline_lint_id, baseline_verify_id
FROM nightly_passes WHERE nightly_id = $nightly
