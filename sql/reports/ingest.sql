-- ingest: the ingests row of one ingest (archive, times, counts).
-- $ingest: the ingest.
SELECT ingest_id, runs_dir, started_at, finished_at, folders_seen, runs_loaded, runs_unchanged, runs_rejected, runs_missing, issues
FROM ingests WHERE ingest_id = $ingest
