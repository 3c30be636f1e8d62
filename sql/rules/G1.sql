-- code: G1
-- title: No chat span starts before the first retrieval span ends
-- kind: rule
-- step: 8
-- modes: retrieval
-- needs_succeeded: false
-- order: parent_key, ord
-- docs/rules.md#g1: chats without any retrieval give one violation; otherwise one per chat (in
-- descendant order, duplicates included) starting strictly before the earliest retrieval end,
-- compared on the workbench's own float-nanosecond time keys (docs/rules.md#span-records).
SELECT j.invocation_id, CAST('' AS STRING) AS parent_key, -1 AS ord,
       'no_retrieval' AS problem, CAST(NULL AS STRING) AS span_id
FROM lint_judged j
JOIN lint_counts c USING (run_key)
WHERE j.mode = 'retrieval' AND c.chat_count > 0 AND c.retrieval_count = 0
UNION ALL
SELECT t.invocation_id, t.parent_key, t.ord, 'chat_before_retrieval', t.span_id
FROM lint_tree t
JOIN lint_judged j USING (run_key)
JOIN lint_counts c USING (run_key)
WHERE j.mode = 'retrieval' AND t.name = 'chat' AND t.start_key < c.first_retrieval_end_key
