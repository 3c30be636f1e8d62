-- Derived relation 6 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_tree AS
WITH RECURSIVE
-- The walk of docs/rules.md#derived-relations without recursing where no run needs it: the children of the root are one
-- join; only spans whose parent is another span (parent_id set and not the root's id, or any
-- child of the root in a run where a child shares the root's id) can sit deeper, so only they
-- feed the recursive part, which starts from the children of the root that have such children.
under_root AS (
    -- spans of the runs in lint_root (a subset of lint_runs), columns as lint_spans derives them
    SELECT s.invocation_id, r.run_key, s.ord, s.span_id, s.parent_id, s.name, s.start_time, s.end_time,
           s.start_workbench_ns AS start_key, s.end_workbench_ns AS end_key,
           coalesce(s.dd_source_id, 'None') AS source_id,
           coalesce(s.dd_content_hash, 'None') AS content_hash, r.root_ord, r.root_span_id
    FROM spans s
    JOIN lint_root r USING (invocation_id)
    WHERE s.parent_id IS NOT NULL
),
level1 AS (
    SELECT invocation_id, run_key, ord, span_id, parent_id, name, start_time, end_time, start_key, end_key,
           source_id, content_hash, root_ord, root_span_id, ord = root_ord AS cycle
    FROM under_root
    WHERE parent_id = root_span_id
),
deep_spans AS (
    SELECT invocation_id, run_key, ord, span_id, parent_id, name, start_time, end_time, start_key, end_key,
           source_id, content_hash
    FROM under_root
    WHERE parent_id <> root_span_id
    UNION ALL
    SELECT invocation_id, run_key, ord, span_id, parent_id, name, start_time, end_time, start_key, end_key,
           source_id, content_hash
    FROM level1 l
    WHERE l.run_key IN (SELECT run_key FROM level1 WHERE span_id = root_span_id)
),
walk AS (
    SELECT l.invocation_id, l.run_key, l.ord, l.span_id, l.name, l.start_time, l.end_time, l.start_key,
           l.end_key, l.source_id, l.content_hash, 1 AS depth,
           '/' || CAST(l.root_ord AS STRING) || '/' || CAST(l.ord AS STRING) || '/' AS path,
           lpad(CAST(999999999 - l.ord AS STRING), 9, '0') AS pop_key,
           CAST('' AS STRING) AS parent_key, l.cycle
    FROM level1 l
    WHERE EXISTS (SELECT 1 FROM deep_spans c WHERE c.run_key = l.run_key AND c.parent_id = l.span_id)
    UNION ALL
    SELECT c.invocation_id, c.run_key, c.ord, c.span_id, c.name, c.start_time, c.end_time, c.start_key,
           c.end_key, c.source_id, c.content_hash, w.depth + 1,
           w.path || CAST(c.ord AS STRING) || '/',
           w.pop_key || lpad(CAST(999999999 - c.ord AS STRING), 9, '0'),
           w.pop_key,
           instr(w.path, '/' || CAST(c.ord AS STRING) || '/') > 0
    FROM walk w
    JOIN deep_spans c ON c.run_key = w.run_key AND c.parent_id = w.span_id
    WHERE NOT w.cycle
)
SELECT invocation_id, run_key, ord, 1 AS depth, CAST('' AS STRING) AS parent_key, cycle, name, span_id,
       start_time, end_time, start_key, end_key, source_id, content_hash
FROM level1
UNION ALL
SELECT invocation_id, run_key, ord, depth, parent_key, cycle, name, span_id, start_time, end_time,
       start_key, end_key, source_id, content_hash
FROM walk
WHERE depth > 1;
COMMENT ON VIEW lint_tree IS 'Descendants of the root (docs/rules.md#derived-relations), once per path: a span reached through two copies of a duplicated parent id appears twice, as the workbench counts it. Upstream output order is (parent_key, ord): parent_key encodes the order in which the workbench''s stack pops the parent (negated sibling ords along the path, fixed width, compared as strings). A row with cycle = true re-enters its own path (docs/rules.md#gw1); the walk stops there.';
COMMENT ON COLUMN lint_tree.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_tree.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_tree.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_tree.depth IS 'Distance from the root (1 = child of the root).';
COMMENT ON COLUMN lint_tree.parent_key IS 'Pop-order key of the parent in the workbench''s stack traversal; output order is (parent_key, ord).';
COMMENT ON COLUMN lint_tree.cycle IS 'The span re-enters its own path: a span-id cycle (docs/rules.md#gw1).';
COMMENT ON COLUMN lint_tree.name IS 'str() of the span name.';
COMMENT ON COLUMN lint_tree.span_id IS 'Span id without 0x.';
COMMENT ON COLUMN lint_tree.start_time IS 'Span start (UTC, microseconds).';
COMMENT ON COLUMN lint_tree.end_time IS 'Span end (UTC, microseconds).';
COMMENT ON COLUMN lint_tree.start_key IS 'The workbench''s time key of the start (spans.start_workbench_ns): G1 compares these, exact also where microseconds merge in its float nanoseconds (after ~2242).';
COMMENT ON COLUMN lint_tree.end_key IS 'The workbench''s time key of the end (spans.end_workbench_ns).';
COMMENT ON COLUMN lint_tree.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_tree.content_hash IS 'str() of the content hash (the string None when absent).';
