-- failing_keys: the runs of report_state with a run page, by invocation id: the failing ones and
-- those with a finding of severity warn (report_warn_codes) in lint pass $lint (listed under the
-- fleet report's warnings); with the page's key: an MD5 digest of $version (the page templates'
-- and queries', reports/runpage.py) and of what the page is made from (ingest, whether its
-- folder is missing, verdicts, texts, the violations of passes $lint and $verify with their
-- messages, and the nightly it has been failing since: none of which changes from one night to
-- the next while the run's verdicts do), as JSON, so that no two differing inputs read alike. The
-- messages are there because a run's own files are not all a message reads: GW3 prints the hash
-- of another run's envelope (its delegated child's), which can change while this run does not.
-- $lint, $verify: the nightly's passes; $version: the page templates' version.
WITH paged AS (
    SELECT * FROM report_state
    WHERE failing OR invocation_id IN (
        SELECT v.invocation_id FROM report_violations v
        JOIN report_warn_codes USING (code)
        WHERE v.lint_id = $lint)
),
messages AS (
    SELECT v.invocation_id,
           list({'verify': v.lint_id = $verify, 'seq': v.seq, 'code': v.code, 'message': v.message}
                ORDER BY v.lint_id = $verify, v.seq) AS violations
    FROM report_violations v JOIN paged USING (invocation_id)
    WHERE v.lint_id = $lint OR v.lint_id = $verify
    GROUP BY v.invocation_id
)
SELECT p.invocation_id,
       md5(concat($version, to_json({'ingest_id': p.ingest_id, 'missing': p.missing, 'g_status': p.g_status,
                                     'g_summary': p.g_summary, 's_status': p.s_status, 's_summary': p.s_summary,
                                     'codes': p.codes, 'violations': m.violations,
                                     'since_nightly_id': p.since_nightly_id, 'since_date': p.since_date}))) AS page_key
FROM paged p LEFT JOIN messages m USING (invocation_id)
ORDER BY p.invocation_id
