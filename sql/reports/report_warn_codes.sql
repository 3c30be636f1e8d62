-- report_warn_codes: the finding codes of severity warn in nightly $nightly (nightly_severities):
-- reports/data.py build_violations keeps them in the temp table report_warn_codes, which the
-- warnings list, its runs and the run pages written for them read. None outside a nightly.
-- $nightly: the nightly (NULL: none).
SELECT code FROM nightly_severities WHERE nightly_id = $nightly AND severity = 'warn'
