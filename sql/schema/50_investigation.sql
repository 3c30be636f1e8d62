-- ------------------------------------------------------------------------------------------
-- Investigation views (helper G): documented starting points for `groundwork sql` and the
-- saved queries in sql/queries/. Portable SQL only (joins, aggregates, window functions,
-- recursive CTEs). "Today's verdict" = latest_lint and latest_verify (40_history.sql).
-- ------------------------------------------------------------------------------------------

CREATE OR REPLACE VIEW run_summary AS
WITH violation_counts AS (
    SELECT lint_id, invocation_id, COUNT(*) AS n, STRING_AGG(code, ',' ORDER BY seq) AS codes
    FROM lint_violations
    GROUP BY lint_id, invocation_id
), citation_counts AS (
    SELECT invocation_id, COUNT(*) AS n
    FROM payload_refs
    WHERE kind = 'ref'
    GROUP BY invocation_id
)
SELECT
    r.invocation_id,
    r.agent_id,
    r.agent_version,
    r.grounding_mode,
    r.outcome_status,
    r.withheld,
    r.completed_at,
    r.missing,
    r.span_count,
    r.evidence_count,
    r.delegation_count,
    COALESCE(cc.n, 0) AS citation_count,
    l.lint_id,
    l.status AS lint_status,
    l.retrieval_count,
    l.chat_count,
    COALESCE(lc.n, 0) AS lint_violation_count,
    lc.codes AS lint_codes,
    v.lint_id AS verify_id,
    v.status AS verify_status,
    v.verified,
    v.unresolved_count,
    COALESCE(vc.n, 0) AS verify_violation_count,
    vc.codes AS verify_codes,
    CASE
        WHEN r.recorded_grounding LIKE 'grounding: passed%' THEN 'passed'
        WHEN r.recorded_grounding LIKE 'grounding: FAILED%' THEN 'failed'
    END AS recorded_lint_status,
    CASE
        WHEN r.recorded_sources IS NULL THEN NULL
        WHEN r.recorded_sources LIKE '%; FAILED' || CHR(10) || '%' THEN 'failed'
        ELSE 'passed'
    END AS recorded_verify_status,
    (l.summary || CHR(10) = r.recorded_grounding) AS lint_matches_recorded,
    (v.summary || CHR(10) = r.recorded_sources) AS verify_matches_recorded
FROM runs r
LEFT JOIN latest_lint l ON l.invocation_id = r.invocation_id
LEFT JOIN violation_counts lc ON lc.lint_id = l.lint_id AND lc.invocation_id = r.invocation_id
LEFT JOIN latest_verify v ON v.invocation_id = r.invocation_id
LEFT JOIN violation_counts vc ON vc.lint_id = v.lint_id AND vc.invocation_id = r.invocation_id
LEFT JOIN citation_counts cc ON cc.invocation_id = r.invocation_id;
COMMENT ON VIEW run_summary IS 'One row per run: who ran it, in which mode, how it ended, what it contains, today''s lint and verify verdicts (latest pass that checked the run) and the verdicts the workbench recorded in grounding.txt / sources.txt.';
COMMENT ON COLUMN run_summary.invocation_id IS 'Run folder name (runs.invocation_id).';
COMMENT ON COLUMN run_summary.agent_id IS 'envelope.agent_id.';
COMMENT ON COLUMN run_summary.agent_version IS 'envelope.agent_version.';
COMMENT ON COLUMN run_summary.grounding_mode IS 'str() of envelope.grounding_mode (NULL when absent).';
COMMENT ON COLUMN run_summary.outcome_status IS 'outcome.status of the stored envelope (failed for a withheld run).';
COMMENT ON COLUMN run_summary.withheld IS 'True when the stored envelope is a conductor-withheld grounding-violation envelope.';
COMMENT ON COLUMN run_summary.completed_at IS 'envelope.completed_at (UTC).';
COMMENT ON COLUMN run_summary.missing IS 'True when the run folder was gone at the last ingest.';
COMMENT ON COLUMN run_summary.span_count IS 'Span records in spans.jsonl.';
COMMENT ON COLUMN run_summary.evidence_count IS 'Evidence elements of the envelope.';
COMMENT ON COLUMN run_summary.delegation_count IS 'Delegation entries of the envelope.';
COMMENT ON COLUMN run_summary.citation_count IS 'Well-formed grounded_on references anywhere in the payload.';
COMMENT ON COLUMN run_summary.lint_id IS 'Latest lint pass that judged the run (NULL if never linted).';
COMMENT ON COLUMN run_summary.lint_status IS 'Today''s lint verdict: passed, failed or unlintable.';
COMMENT ON COLUMN run_summary.retrieval_count IS 'Retrieval spans counted by the latest lint.';
COMMENT ON COLUMN run_summary.chat_count IS 'Chat spans counted by the latest lint.';
COMMENT ON COLUMN run_summary.lint_violation_count IS 'Violations (and groundwork findings) of the latest lint.';
COMMENT ON COLUMN run_summary.lint_codes IS 'Comma-separated codes of those violations, in report order.';
COMMENT ON COLUMN run_summary.verify_id IS 'Latest verify pass that judged the run (NULL if never verified).';
COMMENT ON COLUMN run_summary.verify_status IS 'Today''s source-check verdict: passed, failed or unverifiable.';
COMMENT ON COLUMN run_summary.verified IS 'Evidence items verified against a pinned copy by the latest verify.';
COMMENT ON COLUMN run_summary.unresolved_count IS 'Evidence items without an independent copy in the latest verify.';
COMMENT ON COLUMN run_summary.verify_violation_count IS 'S1/S2 violations of the latest verify.';
COMMENT ON COLUMN run_summary.verify_codes IS 'Comma-separated codes of those violations, in report order.';
COMMENT ON COLUMN run_summary.recorded_lint_status IS 'Verdict recorded by the workbench in grounding.txt: passed, failed, NULL when the file is absent.';
COMMENT ON COLUMN run_summary.recorded_verify_status IS 'Verdict recorded in sources.txt: passed, failed, NULL when the file is absent.';
COMMENT ON COLUMN run_summary.lint_matches_recorded IS 'Today''s grounding summary is byte-identical to grounding.txt (NULL when either is missing).';
COMMENT ON COLUMN run_summary.verify_matches_recorded IS 'Today''s sources summary is byte-identical to sources.txt (NULL when either is missing).';

CREATE OR REPLACE VIEW violation_messages AS
WITH latest AS (
    SELECT lint_id, invocation_id, 'lint' AS kind, linted_at AS started_at FROM latest_lint
    UNION ALL
    SELECT lint_id, invocation_id, 'verify' AS kind, verified_at AS started_at FROM latest_verify
)
SELECT
    x.invocation_id,
    r.agent_id,
    r.grounding_mode,
    r.completed_at,
    x.kind AS check_kind,
    x.lint_id,
    x.started_at AS checked_at,
    m.seq,
    m.code,
    (m.code NOT LIKE 'GW%') AS workbench_rule,
    m.message
FROM latest x
JOIN lint_violations m ON m.lint_id = x.lint_id AND m.invocation_id = x.invocation_id
LEFT JOIN runs r ON r.invocation_id = x.invocation_id;
COMMENT ON VIEW violation_messages IS 'Today''s violations: one row per violation (and groundwork finding) of the latest lint and the latest verify pass of each run, with the exact message text. Older passes are in lint_violations.';
COMMENT ON COLUMN violation_messages.invocation_id IS 'The run.';
COMMENT ON COLUMN violation_messages.agent_id IS 'envelope.agent_id of the run.';
COMMENT ON COLUMN violation_messages.grounding_mode IS 'str() of envelope.grounding_mode.';
COMMENT ON COLUMN violation_messages.completed_at IS 'envelope.completed_at (UTC).';
COMMENT ON COLUMN violation_messages.check_kind IS 'lint (grounding rules) or verify (source check).';
COMMENT ON COLUMN violation_messages.lint_id IS 'The pass that reported the violation.';
COMMENT ON COLUMN violation_messages.checked_at IS 'UTC start time of that pass.';
COMMENT ON COLUMN violation_messages.seq IS '0-based position in the report.';
COMMENT ON COLUMN violation_messages.code IS 'Rule code (G0 ... D3, S1, S2) or groundwork finding code (GW...).';
COMMENT ON COLUMN violation_messages.workbench_rule IS 'True for the workbench''s own rules, false for groundwork-only findings (GW...).';
COMMENT ON COLUMN violation_messages.message IS 'Exact message text, as in grounding.txt / sources.txt.';

CREATE OR REPLACE VIEW span_tree AS
WITH RECURSIVE tree AS (
    SELECT s.invocation_id, s.ord, s.span_id, s.span_id AS root_span_id, s.start_time AS root_start,
           0 AS depth, CAST(s.name AS VARCHAR) AS path, '/' || s.span_id || '/' AS id_path
    FROM spans s
    WHERE s.name = 'invoke_agent'
    UNION ALL
    SELECT c.invocation_id, c.ord, c.span_id, t.root_span_id, t.root_start,
           t.depth + 1, t.path || '/' || c.name, t.id_path || c.span_id || '/'
    FROM tree t
    JOIN spans c ON c.invocation_id = t.invocation_id AND c.parent_id = t.span_id
    -- Cycle guard (docs/rules.md#gw1): never re-enter a span id already on the path.
    WHERE POSITION('/' || c.span_id || '/' IN t.id_path) = 0
)
SELECT
    s.invocation_id,
    s.ord,
    s.line_no,
    s.name,
    s.span_id,
    s.parent_id,
    s.trace_id,
    t.root_span_id,
    (t.depth IS NOT NULL) AS in_tree,
    t.depth,
    t.path,
    s.start_time,
    s.end_time,
    DATE_DIFF('microsecond', s.start_time, s.end_time) AS duration_us,
    DATE_DIFF('microsecond', t.root_start, s.start_time) AS start_offset_us,
    s.dd_agent_id,
    s.dd_source_id,
    s.dd_content_hash,
    s.dd_model_id
FROM spans s
LEFT JOIN tree t ON t.invocation_id = s.invocation_id AND t.ord = s.ord;
COMMENT ON VIEW span_tree IS 'Every span placed in its run''s tree: found from each invoke_agent span by following parent_id links (recursive CTE with a cycle guard). A span reached under two copies of a duplicated parent appears once per copy; a span reached from no invoke_agent appears once with in_tree false.';
COMMENT ON COLUMN span_tree.invocation_id IS 'The run.';
COMMENT ON COLUMN span_tree.ord IS '0-based position of the span record in spans.jsonl.';
COMMENT ON COLUMN span_tree.line_no IS '1-based line of spans.jsonl.';
COMMENT ON COLUMN span_tree.name IS 'Span name (invoke_agent, policy_gate, retrieval, chat, delegate, ...).';
COMMENT ON COLUMN span_tree.span_id IS 'Span id without 0x.';
COMMENT ON COLUMN span_tree.parent_id IS 'Parent span id without 0x (NULL for a root).';
COMMENT ON COLUMN span_tree.trace_id IS 'Trace id without 0x.';
COMMENT ON COLUMN span_tree.root_span_id IS 'span_id of the invoke_agent span the span was reached from (NULL when in_tree is false).';
COMMENT ON COLUMN span_tree.in_tree IS 'True when the span descends from (or is) an invoke_agent span; the linter counts only those.';
COMMENT ON COLUMN span_tree.depth IS '0 for invoke_agent, 1 for its children, ...; NULL outside the tree.';
COMMENT ON COLUMN span_tree.path IS 'Span names from the root down, joined by /, e.g. invoke_agent/retrieval.';
COMMENT ON COLUMN span_tree.start_time IS 'Span start (UTC, microseconds).';
COMMENT ON COLUMN span_tree.end_time IS 'Span end (UTC, microseconds).';
COMMENT ON COLUMN span_tree.duration_us IS 'end_time - start_time in microseconds.';
COMMENT ON COLUMN span_tree.start_offset_us IS 'Microseconds from the root span''s start to this span''s start (negative when it started first).';
COMMENT ON COLUMN span_tree.dd_agent_id IS 'Attribute dd.agent_id.';
COMMENT ON COLUMN span_tree.dd_source_id IS 'Attribute dd.source_id (retrieval, delegate).';
COMMENT ON COLUMN span_tree.dd_content_hash IS 'Attribute dd.content_hash (retrieval, delegate).';
COMMENT ON COLUMN span_tree.dd_model_id IS 'Attribute dd.model_id (chat).';

CREATE OR REPLACE VIEW citations AS
WITH ev AS (
    SELECT invocation_id, source_id, content_hash, COUNT(*) AS n, MIN(ord) AS first_ord
    FROM evidence
    GROUP BY invocation_id, source_id, content_hash
), ret AS (
    SELECT invocation_id,
           COALESCE(dd_source_id, 'None') AS source_id,
           COALESCE(dd_content_hash, 'None') AS content_hash,
           COUNT(*) AS n,
           MIN(end_time) AS first_end
    FROM spans
    WHERE name = 'retrieval'
    GROUP BY invocation_id, COALESCE(dd_source_id, 'None'), COALESCE(dd_content_hash, 'None')
), dl AS (
    SELECT invocation_id, 'invocation:' || delegated_invocation_id AS source_id, content_hash, COUNT(*) AS n
    FROM delegations
    GROUP BY invocation_id, 'invocation:' || delegated_invocation_id, content_hash
)
SELECT
    p.invocation_id,
    r.agent_id,
    r.grounding_mode,
    p.ord,
    p.path,
    p.kind,
    p.source_id,
    p.content_hash,
    CASE
        WHEN p.kind <> 'ref' THEN NULL
        WHEN p.source_id LIKE 'input:%' THEN 'input'
        WHEN p.source_id LIKE 'invocation:%' THEN 'delegation'
        ELSE 'record'
    END AS cites,
    COALESCE(ev.n, 0) AS evidence_matches,
    ev.first_ord AS evidence_ord,
    e.snapshot_ref,
    e.canonicalisation,
    e.source_uri,
    (e.computed_hash = e.content_hash) AS evidence_content_hashes,
    COALESCE(ret.n, 0) AS retrieval_matches,
    ret.first_end AS first_retrieval_end,
    COALESCE(dl.n, 0) AS delegation_matches
FROM payload_refs p
LEFT JOIN runs r ON r.invocation_id = p.invocation_id
LEFT JOIN ev ON ev.invocation_id = p.invocation_id AND ev.source_id = p.source_id AND ev.content_hash = p.content_hash
LEFT JOIN evidence e ON e.invocation_id = p.invocation_id AND e.ord = ev.first_ord
LEFT JOIN ret ON ret.invocation_id = p.invocation_id AND ret.source_id = p.source_id AND ret.content_hash = p.content_hash
LEFT JOIN dl ON dl.invocation_id = p.invocation_id AND dl.source_id = p.source_id AND dl.content_hash = p.content_hash;
COMMENT ON VIEW citations IS 'One row per grounded_on value of every payload (payload_refs), joined to the evidence item, the retrieval spans and the delegation entries carrying the same (source_id, content_hash) pair.';
COMMENT ON COLUMN citations.invocation_id IS 'The run.';
COMMENT ON COLUMN citations.agent_id IS 'envelope.agent_id of the run.';
COMMENT ON COLUMN citations.grounding_mode IS 'str() of envelope.grounding_mode.';
COMMENT ON COLUMN citations.ord IS '0-based discovery order in the payload (docs/rules.md#grounded-references).';
COMMENT ON COLUMN citations.path IS 'JSONPath of the reference, e.g. $.items[0].grounded_on[1].';
COMMENT ON COLUMN citations.kind IS 'ref (well-formed), malformed or not_list; only ref rows carry a pair.';
COMMENT ON COLUMN citations.source_id IS 'Cited source id.';
COMMENT ON COLUMN citations.content_hash IS 'Cited content hash.';
COMMENT ON COLUMN citations.cites IS 'input (input:<id>), delegation (invocation:<id>) or record (anything else); NULL for malformed values.';
COMMENT ON COLUMN citations.evidence_matches IS 'Evidence items with the same (source_id, content_hash).';
COMMENT ON COLUMN citations.evidence_ord IS 'Position of the first such evidence item (NULL when none).';
COMMENT ON COLUMN citations.snapshot_ref IS 'snapshot_ref of that evidence item (the copy the source check looks up).';
COMMENT ON COLUMN citations.canonicalisation IS 'canonicalisation of that evidence item.';
COMMENT ON COLUMN citations.source_uri IS 'source_uri of that evidence item.';
COMMENT ON COLUMN citations.evidence_content_hashes IS 'The evidence item''s content re-hashes to its content_hash (NULL when it carries no hashable content).';
COMMENT ON COLUMN citations.retrieval_matches IS 'retrieval spans of the run with the same (dd.source_id, dd.content_hash), in or out of the tree.';
COMMENT ON COLUMN citations.first_retrieval_end IS 'Earliest end_time of those retrieval spans.';
COMMENT ON COLUMN citations.delegation_matches IS 'Delegation entries with source id invocation:<delegated_invocation_id> and the same content hash.';

CREATE OR REPLACE VIEW latest_lint_diff AS
SELECT
    d.invocation_id,
    r.agent_id,
    r.grounding_mode,
    d.change,
    d.code,
    d.message,
    d.finding,
    d.seq,
    d.previous_seq,
    d.lint_id,
    d.previous_lint_id,
    d.status,
    d.previous_status
FROM lint_diff d
LEFT JOIN runs r ON r.invocation_id = d.invocation_id
WHERE d.lint_id = (SELECT MAX(lint_id) FROM lints WHERE kind = 'lint' AND COALESCE(all_rules, true));
COMMENT ON VIEW latest_lint_diff IS 'What the most recent full lint pass changed: the lint_diff rows (new, resolved, still_failing) of the runs that pass judged, with agent and mode. Use WHERE change = ''new'' for fresh violations.';
COMMENT ON COLUMN latest_lint_diff.invocation_id IS 'The run.';
COMMENT ON COLUMN latest_lint_diff.agent_id IS 'envelope.agent_id of the run.';
COMMENT ON COLUMN latest_lint_diff.grounding_mode IS 'str() of envelope.grounding_mode.';
COMMENT ON COLUMN latest_lint_diff.change IS 'new (not in the run''s previous pass), resolved (gone now) or still_failing (in both).';
COMMENT ON COLUMN latest_lint_diff.code IS 'Rule code (G0 ... D3) or groundwork finding code (GW...).';
COMMENT ON COLUMN latest_lint_diff.message IS 'Exact message text.';
COMMENT ON COLUMN latest_lint_diff.finding IS 'True for groundwork-only findings (GW...).';
COMMENT ON COLUMN latest_lint_diff.seq IS 'Position in the latest report (NULL when resolved).';
COMMENT ON COLUMN latest_lint_diff.previous_seq IS 'Position in the previous report (NULL when new).';
COMMENT ON COLUMN latest_lint_diff.lint_id IS 'The most recent full lint pass.';
COMMENT ON COLUMN latest_lint_diff.previous_lint_id IS 'The run''s full lint pass before it (NULL when linted once).';
COMMENT ON COLUMN latest_lint_diff.status IS 'Verdict status now.';
COMMENT ON COLUMN latest_lint_diff.previous_status IS 'Verdict status in the previous pass (NULL when linted once).';
