-- ingest_issues: the $top most recent current ingest issues (latest ingest first, then by path
-- and line).
SELECT ingest_id, invocation_id, path, line, kind, message
FROM ingest_issues
ORDER BY ingest_id DESC, path NULLS FIRST, line NULLS FIRST
LIMIT $top
