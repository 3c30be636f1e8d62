-- grounding_drift_examples: the first $top runs (by class, then id) whose recorded grounding.txt
-- differs from the lint pass's text, withheld envelopes left out: both texts and whether the run
-- has a page (it fails), and why the run is unlintable when it is (today's text is then NULL).
-- report_grounding_drift (grounding_drift.sql): the lint pass's rows of the view lint_drift.
-- $top: how many.
SELECT d.invocation_id, st.agent_id, st.failing AS has_page, d.drift AS class,
       d.recorded_grounding AS recorded, d.today_grounding AS today,
       CASE WHEN d.status = 'unlintable' THEN COALESCE(v.reason, '') END AS unlintable_reason
FROM report_grounding_drift d JOIN report_state st ON st.invocation_id = d.invocation_id
LEFT JOIN lint_verdicts v ON v.lint_id = d.lint_id AND v.invocation_id = d.invocation_id
WHERE d.drift <> 'withheld'
ORDER BY d.drift, d.invocation_id LIMIT $top
