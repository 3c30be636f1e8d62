-- title: Runs citing a source
-- description: Every run whose payload (a grounded_on reference at any depth) or evidence cites
--   the given source id, where it is cited, and the run's verdicts today.
-- param: source_id (required) — the cited source id, e.g. FAIRsharing.anpj91, src:a or input:<invocation_id>
WITH cited AS (
    SELECT invocation_id, 'payload' AS cited_in, ord, path AS location, content_hash
    FROM payload_refs
    WHERE kind = 'ref' AND source_id = $source_id
    UNION ALL
    SELECT invocation_id, 'evidence', ord, 'evidence[' || CAST(ord AS VARCHAR) || ']', content_hash
    FROM evidence
    WHERE source_id = $source_id
)
SELECT
    s.invocation_id,
    s.agent_id,
    s.grounding_mode,
    s.outcome_status,
    s.completed_at,
    c.cited_in,
    COUNT(*) AS citations,
    STRING_AGG(c.location, ', ' ORDER BY c.ord) AS locations,
    STRING_AGG(DISTINCT c.content_hash, ', ') AS content_hashes,
    s.lint_status,
    s.verify_status
FROM cited c
JOIN run_summary s ON s.invocation_id = c.invocation_id
GROUP BY s.invocation_id, s.agent_id, s.grounding_mode, s.outcome_status, s.completed_at,
         c.cited_in, s.lint_status, s.verify_status
ORDER BY s.completed_at, s.invocation_id, c.cited_in DESC
