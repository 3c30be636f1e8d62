-- report_hidden_codes: the finding codes of severity off in nightly $nightly (nightly_severities):
-- reports/data.py build_state keeps them in the temp table report_hidden_codes, which the view
-- report_violations leaves out. None outside a nightly.
-- $nightly: the nightly (NULL: none hidden).
SELECT code FROM nightly_severities WHERE nightly_id = $nightly AND severity = 'off'
