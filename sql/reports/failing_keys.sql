-- failing_keys: the runs of report_state with a run page, by invocation id: the failing ones and
-- those with a finding of severity warn (report_warn_codes) in lint pass $lint (listed under the
-- fleet report's warnings); with the page's key: an MD5 digest of $version (the page templates'
-- and queries', reports/runpage.py) and of what the page is made from (ingest, whether its
-- folder is missing, verdicts, texts, violation codes, the messages of its findings, and the
-- nightly it has been failing since: none of which changes from one night to the next while the
-- run's verdicts do), as JSON, so that no two differing inputs read alike. The texts hold every
-- message of the workbench's rules (grounding.txt, sources.txt) but not the findings' (the codes
-- of nightly $nightly's severities, docs/rules.md#severities), and a finding may read another run:
-- GW3 prints the hash of the delegated child's envelope, which can change while this run does not.
-- $lint: the nightly's lint pass; $nightly: the nightly; $version: the page templates' version.
WITH paged AS (
    SELECT * FROM report_state
    WHERE failing OR invocation_id IN (
        SELECT v.invocation_id FROM report_violations v
        JOIN report_warn_codes USING (code)
        WHERE v.lint_id = $lint)
),
findings AS (
    SELECT v.invocation_id, list({'seq': v.seq, 'code': v.code, 'message': v.message} ORDER BY v.seq) AS findings
    FROM report_violations v JOIN paged USING (invocation_id)
    WHERE v.lint_id = $lint AND v.code IN (SELECT code FROM nightly_severities WHERE nightly_id = $nightly)
    GROUP BY v.invocation_id
)
SELECT p.invocation_id,
       md5(concat($version, to_json({'ingest_id': p.ingest_id, 'missing': p.missing, 'g_status': p.g_status,
                                     'g_summary': p.g_summary, 's_status': p.s_status, 's_summary': p.s_summary,
                                     'codes': p.codes, 'findings': f.findings,
                                     'since_nightly_id': p.since_nightly_id, 'since_date': p.since_date}))) AS page_key
FROM paged p LEFT JOIN findings f USING (invocation_id)
ORDER BY p.invocation_id
