-- sources_drift_examples: the first $top runs of report_sources_drift (sources_drift.sql) whose
-- texts differ (classes verdict, then text; by id), with both texts.
SELECT * FROM report_sources_drift WHERE class IN ('verdict', 'text') ORDER BY class DESC, invocation_id LIMIT $top
