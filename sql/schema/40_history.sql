-- Views over the check history (lints, lint_verdicts, lint_violations, verify_verdicts, nightlies):
-- today's verdicts, what changed, and how the recorded texts drift from today's. A lint restricted
-- to some rule codes (--rules) is recorded too, but only passes that applied every rule feed
-- latest_lint / lint_diff / recorded_drift.

CREATE OR REPLACE VIEW lint_context AS
SELECT d.invocation_id,
       string_agg(coalesce(d.delegated_invocation_id, 'None') || '=' || coalesce(c.envelope_hash, '-')
                  || CASE WHEN c.invocation_id IS NULL THEN ' absent' WHEN coalesce(c.missing, false) THEN ' missing' ELSE '' END,
                  ', ' ORDER BY d.ord) AS context_key
FROM delegations d
LEFT JOIN runs c ON c.invocation_id = d.delegated_invocation_id
GROUP BY d.invocation_id;
COMMENT ON VIEW lint_context IS 'For each run with delegations, the state of its delegated children in the archive (envelope hash, absent or missing): a recorded verdict is reused only while this is unchanged.';
COMMENT ON COLUMN lint_context.invocation_id IS 'The delegating run.';
COMMENT ON COLUMN lint_context.context_key IS 'child id=envelope hash (absent / missing), per delegation in order.';

CREATE OR REPLACE VIEW latest_lint AS
WITH ranked AS (
    SELECT v.*, l.started_at AS linted_at, l.ruleset_hash, l.tool_version,
           ROW_NUMBER() OVER (PARTITION BY v.invocation_id ORDER BY v.lint_id DESC) AS recency
    FROM lint_verdicts v
    JOIN lints l ON l.lint_id = v.lint_id
    WHERE l.kind = 'lint' AND coalesce(l.all_rules, true)
)
SELECT lint_id, invocation_id, status, passed, mode, retrieval_count, chat_count, summary, reason,
       linted_at, ruleset_hash, tool_version, ingest_id
FROM ranked
WHERE recency = 1;
COMMENT ON VIEW latest_lint IS 'Today''s grounding verdict of every run: its verdict in the latest full lint pass (all rules) that judged it.';
COMMENT ON COLUMN latest_lint.lint_id IS 'The lint pass the verdict comes from.';
COMMENT ON COLUMN latest_lint.invocation_id IS 'The run.';
COMMENT ON COLUMN latest_lint.status IS 'passed, failed or unlintable.';
COMMENT ON COLUMN latest_lint.passed IS 'True only for status passed.';
COMMENT ON COLUMN latest_lint.mode IS 'Report mode (NULL = unknown mode).';
COMMENT ON COLUMN latest_lint.retrieval_count IS 'Retrieval spans counted by the linter.';
COMMENT ON COLUMN latest_lint.chat_count IS 'Chat spans counted by the linter.';
COMMENT ON COLUMN latest_lint.summary IS 'Exact grounding.txt text without the final newline (NULL when unlintable).';
COMMENT ON COLUMN latest_lint.reason IS 'Why the run is unlintable.';
COMMENT ON COLUMN latest_lint.linted_at IS 'UTC start time of that lint pass.';
COMMENT ON COLUMN latest_lint.ruleset_hash IS 'Rule set the verdict was computed with.';
COMMENT ON COLUMN latest_lint.tool_version IS 'groundwork version that computed it.';
COMMENT ON COLUMN latest_lint.ingest_id IS 'runs.ingest_id of the run when it was judged.';

CREATE OR REPLACE VIEW lint_diff AS
WITH ranked AS (
    SELECT v.invocation_id, v.lint_id, v.status,
           ROW_NUMBER() OVER (PARTITION BY v.invocation_id ORDER BY v.lint_id DESC) AS recency
    FROM lint_verdicts v
    JOIN lints l ON l.lint_id = v.lint_id
    WHERE l.kind = 'lint' AND coalesce(l.all_rules, true)
),
pair AS (
    SELECT c.invocation_id, c.lint_id, c.status, p.lint_id AS previous_lint_id, p.status AS previous_status
    FROM ranked c
    LEFT JOIN ranked p ON p.invocation_id = c.invocation_id AND p.recency = 2
    WHERE c.recency = 1
),
now_rows AS (
    SELECT m.invocation_id, m.seq, m.code, m.message,
           ROW_NUMBER() OVER (PARTITION BY m.invocation_id, m.message ORDER BY m.seq) AS occurrence
    FROM lint_violations m
    JOIN pair USING (invocation_id, lint_id)
),
before_rows AS (
    SELECT m.invocation_id, m.seq, m.code, m.message,
           ROW_NUMBER() OVER (PARTITION BY m.invocation_id, m.message ORDER BY m.seq) AS occurrence
    FROM lint_violations m
    JOIN pair p ON p.invocation_id = m.invocation_id AND p.previous_lint_id = m.lint_id
)
SELECT p.invocation_id,
       coalesce(n.code, b.code) AS code,
       coalesce(n.message, b.message) AS message,
       CASE WHEN b.message IS NULL THEN 'new'
            WHEN n.message IS NULL THEN 'resolved'
            ELSE 'still_failing' END AS change,
       coalesce(n.code, b.code) LIKE 'GW%' AS finding,
       n.seq, b.seq AS previous_seq,
       p.lint_id, p.previous_lint_id, p.status, p.previous_status
FROM now_rows n
FULL OUTER JOIN before_rows b
     ON b.invocation_id = n.invocation_id AND b.message = n.message AND b.occurrence = n.occurrence
JOIN pair p ON p.invocation_id = coalesce(n.invocation_id, b.invocation_id);
COMMENT ON VIEW lint_diff IS 'Which messages changed for each run between its two latest full lint passes, whoever ran them (a nightly or a manual groundwork lint): one row per violation (or groundwork finding) that is new, resolved or still failing. Identical messages are matched by occurrence. A run linted once has only new rows. Not the nightly''s new / resolved / still failing, which compares runs between nightlies whatever ran in between: that is nightly_changes.';
COMMENT ON COLUMN lint_diff.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_diff.code IS 'Rule code (G0 ... D3) or groundwork finding code (GW...).';
COMMENT ON COLUMN lint_diff.message IS 'Exact message text.';
COMMENT ON COLUMN lint_diff.change IS 'new (not in the previous pass), resolved (gone now) or still_failing (in both).';
COMMENT ON COLUMN lint_diff.finding IS 'True for groundwork-only findings (GW...), which never change the workbench verdict.';
COMMENT ON COLUMN lint_diff.seq IS 'Position in the latest report (NULL when resolved).';
COMMENT ON COLUMN lint_diff.previous_seq IS 'Position in the previous report (NULL when new).';
COMMENT ON COLUMN lint_diff.lint_id IS 'The run''s latest full lint pass.';
COMMENT ON COLUMN lint_diff.previous_lint_id IS 'The run''s full lint pass before that (NULL when linted once).';
COMMENT ON COLUMN lint_diff.status IS 'Verdict status in the latest pass.';
COMMENT ON COLUMN lint_diff.previous_status IS 'Verdict status in the previous pass (NULL when linted once).';

CREATE OR REPLACE VIEW lint_drift AS
WITH judged AS (
    SELECT v.lint_id, v.invocation_id, v.status, v.mode, v.summary, r.recorded_grounding,
           coalesce(r.withheld, false) AS withheld
    FROM lint_verdicts v
    JOIN lints l ON l.lint_id = v.lint_id
    JOIN runs r ON r.invocation_id = v.invocation_id
    WHERE l.kind = 'lint' AND coalesce(l.all_rules, true)
      AND r.recorded_grounding IS NOT NULL
      AND (v.summary IS NULL OR v.summary || chr(10) <> r.recorded_grounding)
),
e1 AS (
    SELECT lint_id, invocation_id, count(*) AS e1_count
    FROM lint_violations
    WHERE code = 'E1'
    GROUP BY lint_id, invocation_id
)
SELECT t.invocation_id, t.lint_id, t.status, t.recorded_grounding,
       CASE WHEN t.summary IS NULL THEN NULL ELSE t.summary || chr(10) END AS today_grounding,
       CASE
           WHEN t.withheld THEN 'withheld'
           WHEN t.status <> 'unlintable'
                AND ((coalesce(e1.e1_count, 0) > 0 AND strpos(t.recorded_grounding, chr(10) || '  - E1: ') = 0)
                     OR (t.mode = 'delegation'
                         AND strpos(t.recorded_grounding, 'G0: envelope declares no valid grounding_mode (''delegation'')') > 0))
               THEN 'rules_changed'
           WHEN t.recorded_grounding LIKE 'grounding: passed%' AND t.status <> 'passed' THEN 'recorded_pass_fails_today'
           ELSE 'other'
       END AS drift
FROM judged t
LEFT JOIN e1 ON e1.lint_id = t.lint_id AND e1.invocation_id = t.invocation_id;
COMMENT ON VIEW lint_drift IS 'For every full lint pass (all rules) and run it judged whose recorded grounding.txt differs from the pass''s text: the class of the difference, as recorded_drift defines it for today''s verdicts (a report on one pass filters lint_id, which reads that pass alone).';
COMMENT ON COLUMN lint_drift.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_drift.lint_id IS 'The lint pass.';
COMMENT ON COLUMN lint_drift.status IS 'The pass''s status: passed, failed or unlintable.';
COMMENT ON COLUMN lint_drift.recorded_grounding IS 'grounding.txt as the workbench wrote it.';
COMMENT ON COLUMN lint_drift.today_grounding IS 'grounding.txt as the pass gives it (NULL when unlintable).';
COMMENT ON COLUMN lint_drift.drift IS 'withheld, rules_changed, recorded_pass_fails_today or other (see recorded_drift).';

CREATE OR REPLACE VIEW recorded_drift AS
SELECT d.invocation_id, d.lint_id, d.status, d.recorded_grounding, d.today_grounding, d.drift
FROM lint_drift d
JOIN latest_lint l ON l.lint_id = d.lint_id AND l.invocation_id = d.invocation_id;
COMMENT ON VIEW recorded_drift IS 'Runs whose recorded grounding.txt differs from today''s verdict (latest_lint), classified: withheld (the conductor stored an envelope without the payload and evidence it judged, docs/rules.md#live-and-stored-verdicts), rules_changed (the text matches an older workbench rule set: no E1 lines where E1 fires today, or delegation rejected as an invalid mode, docs/rules.md#older-rule-sets), recorded_pass_fails_today, other.';
COMMENT ON COLUMN recorded_drift.invocation_id IS 'The run.';
COMMENT ON COLUMN recorded_drift.lint_id IS 'The lint pass today''s verdict comes from.';
COMMENT ON COLUMN recorded_drift.status IS 'Today''s status: passed, failed or unlintable.';
COMMENT ON COLUMN recorded_drift.recorded_grounding IS 'grounding.txt as the workbench wrote it.';
COMMENT ON COLUMN recorded_drift.today_grounding IS 'grounding.txt as the rules give it today (NULL when unlintable).';
COMMENT ON COLUMN recorded_drift.drift IS 'withheld, rules_changed, recorded_pass_fails_today or other.';

CREATE OR REPLACE VIEW latest_verify AS
WITH ranked AS (
    SELECT v.*, l.started_at AS verified_at, l.sources_path,
           ROW_NUMBER() OVER (PARTITION BY v.invocation_id ORDER BY v.lint_id DESC) AS recency
    FROM verify_verdicts v
    JOIN lints l ON l.lint_id = v.lint_id
    WHERE l.kind = 'verify'
)
SELECT lint_id, invocation_id, status, passed, verified, unresolved_count, summary, reason,
       verified_at, sources_path
FROM ranked
WHERE recency = 1;
COMMENT ON VIEW latest_verify IS 'Today''s source-check verdict of every run: its verdict in the latest verify pass that judged it (the counterpart of latest_lint).';
COMMENT ON COLUMN latest_verify.lint_id IS 'The verify pass the verdict comes from.';
COMMENT ON COLUMN latest_verify.invocation_id IS 'The run.';
COMMENT ON COLUMN latest_verify.status IS 'passed, failed or unverifiable.';
COMMENT ON COLUMN latest_verify.passed IS 'True only for status passed.';
COMMENT ON COLUMN latest_verify.verified IS 'Evidence items verified against a pinned copy.';
COMMENT ON COLUMN latest_verify.unresolved_count IS 'Evidence items without an independent copy.';
COMMENT ON COLUMN latest_verify.summary IS 'Exact sources.txt text without the final newline.';
COMMENT ON COLUMN latest_verify.reason IS 'Why the run could not be verified.';
COMMENT ON COLUMN latest_verify.verified_at IS 'UTC start time of that verify pass.';
COMMENT ON COLUMN latest_verify.sources_path IS 'sources.yaml the pass used.';

-- ------------------------------------------------------------------------------------------
-- Nightly changes: the one definition of a nightly's "new / resolved / still failing" (its exit
-- status, its reports, its nightlies.new_failing / resolved / still_failing and its metrics).
-- ------------------------------------------------------------------------------------------

CREATE OR REPLACE VIEW nightly_passes AS
WITH baseline AS (
    SELECT n.nightly_id, n.lint_id, n.verify_id,
           (SELECT max(f.nightly_id) FROM nightlies f
            WHERE f.exit_status IN (0, 1) AND f.nightly_id < n.nightly_id) AS baseline_nightly_id
    FROM nightlies n
)
SELECT n.nightly_id, n.lint_id, n.verify_id, n.baseline_nightly_id,
       b.lint_id AS baseline_lint_id, b.verify_id AS baseline_verify_id
FROM baseline n
LEFT JOIN nightlies b ON b.nightly_id = n.baseline_nightly_id;
COMMENT ON VIEW nightly_passes IS 'The check passes each nightly job ran and those it is compared with: the passes of the previous nightly that finished (exit status 0 or 1; a nightly that could not finish is never a baseline).';
COMMENT ON COLUMN nightly_passes.nightly_id IS 'The nightly job.';
COMMENT ON COLUMN nightly_passes.lint_id IS 'Its lint pass (NULL until the job has linted).';
COMMENT ON COLUMN nightly_passes.verify_id IS 'Its verify pass (NULL without --sources).';
COMMENT ON COLUMN nightly_passes.baseline_nightly_id IS 'The last finished nightly before it (NULL for the first).';
COMMENT ON COLUMN nightly_passes.baseline_lint_id IS 'lint_id of that baseline nightly.';
COMMENT ON COLUMN nightly_passes.baseline_verify_id IS 'verify_id of that baseline nightly.';

CREATE OR REPLACE VIEW nightly_changes AS
WITH passes AS (
    -- Without a verify pass in the nightly, the source check is left out of the comparison
    -- (otherwise every run failing only the source check in the baseline would look resolved).
    SELECT nightly_id, lint_id, verify_id, baseline_lint_id,
           CASE WHEN verify_id IS NOT NULL THEN baseline_verify_id END AS baseline_verify_id
    FROM nightly_passes
    WHERE lint_id IS NOT NULL
),
-- Each pass's verdicts, joined by run (full joins: a run may be judged by some of the passes only).
g AS (SELECT p.nightly_id, v.invocation_id, v.status, v.summary FROM passes p JOIN lint_verdicts v ON v.lint_id = p.lint_id),
gb AS (SELECT p.nightly_id, v.invocation_id, v.status, v.summary FROM passes p JOIN lint_verdicts v ON v.lint_id = p.baseline_lint_id),
s AS (SELECT p.nightly_id, v.invocation_id, v.status, v.summary FROM passes p JOIN verify_verdicts v ON v.lint_id = p.verify_id),
sb AS (SELECT p.nightly_id, v.invocation_id, v.status, v.summary FROM passes p JOIN verify_verdicts v ON v.lint_id = p.baseline_verify_id),
-- Runs with a groundwork finding of severity error (nightly_severities: the nightly's own, for its
-- lint pass and its baseline's alike, so a severity change alone makes no run new or resolved).
errors AS (SELECT nightly_id, code FROM nightly_severities WHERE severity = 'error'),
fe AS (SELECT DISTINCT p.nightly_id, m.invocation_id FROM passes p JOIN errors e ON e.nightly_id = p.nightly_id
       JOIN lint_violations m ON m.lint_id = p.lint_id AND m.code = e.code),
feb AS (SELECT DISTINCT p.nightly_id, m.invocation_id FROM passes p JOIN errors e ON e.nightly_id = p.nightly_id
        JOIN lint_violations m ON m.lint_id = p.baseline_lint_id AND m.code = e.code),
flags AS (
    SELECT coalesce(g.nightly_id, gb.nightly_id, s.nightly_id, sb.nightly_id) AS nightly_id,
           coalesce(g.invocation_id, gb.invocation_id, s.invocation_id, sb.invocation_id) AS invocation_id,
           g.status AS g_status, gb.status AS gb_status, s.status AS s_status, sb.status AS sb_status,
           g.summary AS g_summary, gb.summary AS gb_summary, s.summary AS s_summary, sb.summary AS sb_summary,
           fe.invocation_id IS NOT NULL AS f_fail, feb.invocation_id IS NOT NULL AS fb_fail
    FROM g
    FULL JOIN gb ON gb.nightly_id = g.nightly_id AND gb.invocation_id = g.invocation_id
    FULL JOIN s ON s.nightly_id = coalesce(g.nightly_id, gb.nightly_id) AND s.invocation_id = coalesce(g.invocation_id, gb.invocation_id)
    FULL JOIN sb ON sb.nightly_id = coalesce(g.nightly_id, gb.nightly_id, s.nightly_id)
                AND sb.invocation_id = coalesce(g.invocation_id, gb.invocation_id, s.invocation_id)
    LEFT JOIN fe ON fe.nightly_id = g.nightly_id AND fe.invocation_id = g.invocation_id
    LEFT JOIN feb ON feb.nightly_id = gb.nightly_id AND feb.invocation_id = gb.invocation_id
),
failing AS (
    SELECT f.*,
           coalesce(f.g_status <> 'passed', false) AS g_fail,
           coalesce(f.gb_status <> 'passed', false) AS gb_fail,
           coalesce(f.s_status <> 'passed', false) AS s_fail,
           coalesce(f.sb_status <> 'passed', false) AS sb_fail
    FROM flags f
)
SELECT nightly_id, invocation_id,
       g_status, gb_status, s_status, sb_status, g_summary, gb_summary, s_summary, sb_summary,
       g_fail, gb_fail, s_fail, sb_fail,
       (g_fail OR s_fail OR f_fail) AS failing,
       (gb_fail OR sb_fail OR fb_fail) AS base_failing,
       CASE
           WHEN (g_fail AND NOT gb_fail) OR (s_fail AND NOT sb_fail) OR (f_fail AND NOT fb_fail) THEN 'new'
           WHEN g_fail OR s_fail OR f_fail THEN 'still'
           WHEN (gb_fail OR sb_fail OR fb_fail) AND g_status IS NULL AND s_status IS NULL THEN 'gone'
           WHEN gb_fail OR sb_fail OR fb_fail THEN 'resolved'
       END AS change,
       ((g_fail AND gb_fail AND g_summary IS DISTINCT FROM gb_summary)
         OR (s_fail AND sb_fail AND s_summary IS DISTINCT FROM sb_summary)) AS verdict_changed,
       f_fail, fb_fail
FROM failing;
COMMENT ON VIEW nightly_changes IS 'What each nightly job calls new, still failing, resolved or gone: per nightly, one row per run its passes judged or its baseline''s passes found failing (nightly_passes). Failing = the grounding verdict is failed or unlintable, or the source-check verdict is failed or unverifiable, or the lint pass found a groundwork finding of severity error (nightly_severities). Passes run between two nightlies (a manual groundwork lint or verify) change nothing here; lint_diff answers the per-message question between a run''s two latest full lints.';
COMMENT ON COLUMN nightly_changes.nightly_id IS 'The nightly job (nightly_passes).';
COMMENT ON COLUMN nightly_changes.invocation_id IS 'The run.';
COMMENT ON COLUMN nightly_changes.g_status IS 'Grounding verdict in the nightly''s lint pass (NULL when it did not judge the run).';
COMMENT ON COLUMN nightly_changes.gb_status IS 'Grounding verdict in the baseline''s lint pass.';
COMMENT ON COLUMN nightly_changes.s_status IS 'Source-check verdict in the nightly''s verify pass.';
COMMENT ON COLUMN nightly_changes.sb_status IS 'Source-check verdict in the baseline''s verify pass (NULL when the nightly ran no verify pass).';
COMMENT ON COLUMN nightly_changes.g_summary IS 'grounding.txt text of the nightly''s verdict, without the final newline.';
COMMENT ON COLUMN nightly_changes.gb_summary IS 'grounding.txt text of the baseline''s verdict.';
COMMENT ON COLUMN nightly_changes.s_summary IS 'sources.txt text of the nightly''s verdict, without the final newline.';
COMMENT ON COLUMN nightly_changes.sb_summary IS 'sources.txt text of the baseline''s verdict.';
COMMENT ON COLUMN nightly_changes.g_fail IS 'The nightly''s grounding verdict is failed or unlintable.';
COMMENT ON COLUMN nightly_changes.gb_fail IS 'The baseline''s grounding verdict is failed or unlintable.';
COMMENT ON COLUMN nightly_changes.s_fail IS 'The nightly''s source-check verdict is failed or unverifiable.';
COMMENT ON COLUMN nightly_changes.sb_fail IS 'The baseline''s source-check verdict is failed or unverifiable.';
COMMENT ON COLUMN nightly_changes.failing IS 'The run fails a check in the nightly.';
COMMENT ON COLUMN nightly_changes.base_failing IS 'The run failed a check in the baseline.';
COMMENT ON COLUMN nightly_changes.change IS 'new (fails a check it did not fail in the baseline; runs new to the warehouse included, and every failing run when there is no baseline), still (fails now and in the baseline, not new in another check), resolved (failed in the baseline, judged now, fails no check), gone (failed in the baseline, not judged now); NULL for a run passing in both.';
COMMENT ON COLUMN nightly_changes.verdict_changed IS 'Still failing with another text than in the baseline (grounding.txt or sources.txt).';
COMMENT ON COLUMN nightly_changes.f_fail IS 'The nightly''s lint pass found a groundwork finding (GW...) of severity error in the run (the nightly''s nightly_severities).';
COMMENT ON COLUMN nightly_changes.fb_fail IS 'The baseline''s lint pass found one (by the same severities).';
