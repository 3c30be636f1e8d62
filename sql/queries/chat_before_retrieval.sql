-- title: Chats that started before any retrieval ended, and the near misses
-- description: Every chat span in the span tree of a run in the given mode, compared with the
--   earliest end of a retrieval span in the same tree (what G1 compares). finding is before
--   (G1 reports it), no retrieval (G1: a chat span exists but no retrieval span does) or
--   near miss (started fewer than near_ms milliseconds after the first retrieval ended).
-- param: near_ms (float, default 5) — a chat starting less than this many milliseconds after the first retrieval ended is a near miss
-- param: mode (default retrieval) — grounding mode of the runs to examine
WITH tree AS (
    SELECT * FROM span_tree WHERE in_tree
), first_end AS (
    SELECT invocation_id, root_span_id, MIN(end_time) AS first_retrieval_end
    FROM tree
    WHERE name = 'retrieval'
    GROUP BY invocation_id, root_span_id
), chats AS (
    SELECT
        c.invocation_id,
        r.agent_id,
        c.span_id AS chat_span_id,
        c.start_time AS chat_start,
        f.first_retrieval_end,
        DATE_DIFF('microsecond', f.first_retrieval_end, c.start_time) / 1000.0 AS margin_ms
    FROM tree c
    JOIN runs r ON r.invocation_id = c.invocation_id
    LEFT JOIN first_end f ON f.invocation_id = c.invocation_id AND f.root_span_id = c.root_span_id
    WHERE c.name = 'chat' AND r.grounding_mode = $mode
)
SELECT
    invocation_id,
    agent_id,
    chat_span_id,
    chat_start,
    first_retrieval_end,
    margin_ms,
    CASE
        WHEN first_retrieval_end IS NULL THEN 'no retrieval'
        WHEN margin_ms < 0 THEN 'before'
        ELSE 'near miss'
    END AS finding
FROM chats
WHERE first_retrieval_end IS NULL OR margin_ms < $near_ms
ORDER BY invocation_id, chat_start, chat_span_id
