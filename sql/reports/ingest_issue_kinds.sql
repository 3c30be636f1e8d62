-- ingest_issue_kinds: the current ingest issues (the table keeps the latest issues of every run)
-- per kind, most frequent first: all of them, and those the ingest $ingest recorded.
SELECT kind, COUNT(*) AS n, COUNT(*) FILTER (WHERE ingest_id = $ingest) AS tonight
FROM ingest_issues GROUP BY kind ORDER BY n DESC, kind
