-- sections_key: what the fleet report's kept sections (reports/sections.py: recorded-vs-today
-- drift, unresolved evidence by source) read besides the report queries themselves, as one row:
-- the warehouse schema's digest, the latest check pass recorded, the nightly's passes as
-- recorded (id, kind, times, rule-set hash), the runs (how many, the latest ingest that loaded
-- one, how many are missing), the latest ingest that changed a run (or was not counted), and the
-- nightly's finding severities. Equal rows: equal sections.
-- $nightly: the nightly; $lint, $verify: its passes (NULL: none).
SELECT (SELECT value FROM schema_info WHERE key = 'schema_sha256') AS schema_sha256,
       (SELECT max(lint_id) FROM lints) AS latest_pass,
       (SELECT list([CAST(lint_id AS VARCHAR), kind, CAST(started_at AS VARCHAR), CAST(finished_at AS VARCHAR),
                     ruleset_hash, sources_path] ORDER BY lint_id)
        FROM lints WHERE lint_id = $lint OR lint_id = $verify) AS passes,
       (SELECT [count(*), max(ingest_id), count(*) FILTER (WHERE missing)] FROM runs) AS runs,
       (SELECT max(ingest_id) FROM ingests WHERE runs_changed IS DISTINCT FROM 0) AS changed_by,
       (SELECT list([code, severity] ORDER BY code) FROM nightly_severities WHERE nightly_id = $nightly) AS severities
