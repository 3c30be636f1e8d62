-- ingest: the ingests row of one ingest (archive, times, counts), the kind of scan it ran
-- (ingests.scan) and when the last full scan of the same archive, up to this one, started
-- (last_full_scan_at, as the reports write times; NULL when there was none).
-- $ingest: the ingest.
SELECT ingest_id, runs_dir, started_at, finished_at, folders_seen, runs_loaded, runs_unchanged, runs_rejected, runs_missing, issues,
       scan,
       (SELECT strftime(max(f.started_at), '%Y-%m-%dT%H:%M:%SZ') FROM ingests f
        WHERE f.scan = 'full' AND f.finished_at IS NOT NULL AND f.runs_dir = i.runs_dir AND f.ingest_id <= i.ingest_id
       ) AS last_full_scan_at
FROM ingests i WHERE ingest_id = $ingest
