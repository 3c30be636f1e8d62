-- Derived relation 12 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_counts AS
SELECT j.invocation_id, j.run_key,
       count(t.ord) FILTER (WHERE t.name = 'retrieval') AS retrieval_count,
       count(t.ord) FILTER (WHERE t.name = 'chat')      AS chat_count,
       min(t.end_time) FILTER (WHERE t.name = 'retrieval') AS first_retrieval_end,
       min(t.end_key) FILTER (WHERE t.name = 'retrieval')  AS first_retrieval_end_key
FROM lint_judged j LEFT JOIN lint_tree t USING (run_key)
GROUP BY j.invocation_id, j.run_key;
COMMENT ON VIEW lint_counts IS 'retrieval_count and chat_count over the descendants, duplicates counted (docs/rules.md#derived-relations, docs/rules.md#edge-cases), and the earliest end of a retrieval (G1).';
COMMENT ON COLUMN lint_counts.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_counts.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_counts.retrieval_count IS 'Retrieval descendants, duplicates counted.';
COMMENT ON COLUMN lint_counts.chat_count IS 'Chat descendants, duplicates counted.';
COMMENT ON COLUMN lint_counts.first_retrieval_end IS 'Earliest end_time over retrieval descendants.';
COMMENT ON COLUMN lint_counts.first_retrieval_end_key IS 'Earliest end time key (workbench float nanoseconds) over retrieval descendants: what G1 compares chat starts with.';
