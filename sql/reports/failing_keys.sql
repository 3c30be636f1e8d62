-- failing_keys: the runs of report_state with a run page, by invocation id: the failing ones and
-- those with a finding of severity warn (report_warn_codes) in lint pass $lint (listed under the
-- fleet report's warnings); with the page's key: an MD5 digest of $version (the page templates'
-- and queries', reports/runpage.py) and of what the page is made from (ingest, whether its
-- folder is missing, verdicts, texts, violation codes, and the nightly it has been failing since:
-- none of which changes from one night to the next while the run's verdicts do), as JSON, so
-- that no two differing inputs read alike.
-- $lint: the nightly's lint pass; $version: the page templates' version.
SELECT invocation_id,
       md5(concat($version, to_json({'ingest_id': ingest_id, 'missing': missing, 'g_status': g_status,
                                     'g_summary': g_summary, 's_status': s_status, 's_summary': s_summary,
                                     'codes': codes, 'since_nightly_id': since_nightly_id,
                                     'since_date': since_date}))) AS page_key
FROM report_state
WHERE failing OR invocation_id IN (
    SELECT v.invocation_id FROM report_violations v
    JOIN report_warn_codes USING (code)
    WHERE v.lint_id = $lint)
ORDER BY invocation_id
