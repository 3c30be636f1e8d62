-- ingest_issues: the $top most recent current ingest issues (latest ingest first, then by path
-- and line; kind and message order the issues of one line, so the reports do not depend on the
-- order the rows were written in).
SELECT ingest_id, invocation_id, path, line, kind, message
FROM ingest_issues
ORDER BY ingest_id DESC, path NULLS FIRST, line NULLS FIRST, kind, message
LIMIT $top
