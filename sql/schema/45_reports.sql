-- What a nightly keeps for the next one's reports (reports/data.py build_state): the first nightly
-- of each failing run's current failing streak, and per-nightly counts the trend charts read, so
-- that a report reads O(nights x agents or rules) rows instead of every pass of the history.
-- Filled when a nightly's counts are built; a warehouse of an older groundwork gets them for its
-- earlier nightlies from the history the first time a nightly needs them (reports/data.py
-- keep_counts).

CREATE TABLE IF NOT EXISTS nightly_failing (
    nightly_id       INTEGER,
    invocation_id    VARCHAR,
    since_nightly_id INTEGER
);
COMMENT ON TABLE nightly_failing IS 'Per nightly, each run failing in it (nightly_changes.failing) and the first nightly of its current unbroken failing streak: the run failed in every finished nightly from since_nightly_id up to this one. Kept incrementally (this nightly''s row = its baseline''s since_nightly_id when the run was failing there, else this nightly) and equal to the view failing_streaks, which recomputes it from the whole history. Only the rows of the latest nightlies are kept (a nightly needs its baseline''s).';
COMMENT ON COLUMN nightly_failing.nightly_id IS 'The nightly (nightlies.nightly_id).';
COMMENT ON COLUMN nightly_failing.invocation_id IS 'A run failing in it.';
COMMENT ON COLUMN nightly_failing.since_nightly_id IS 'First nightly of the run''s current failing streak ("failing since nightly #N" on the run page): the nightly itself when the run did not fail in its baseline.';

CREATE TABLE IF NOT EXISTS nightly_agent_counts (
    nightly_id INTEGER,
    agent_id   VARCHAR,
    runs       BIGINT,
    failing    BIGINT
);
COMMENT ON TABLE nightly_agent_counts IS 'Per nightly and agent, the runs its lint or verify pass judged and those failing either check (status failed, unlintable or unverifiable): the per-agent trend charts. The agent is the run''s agent when the nightly ran.';
COMMENT ON COLUMN nightly_agent_counts.nightly_id IS 'The nightly.';
COMMENT ON COLUMN nightly_agent_counts.agent_id IS 'runs.agent_id (NULL: runs without an agent).';
COMMENT ON COLUMN nightly_agent_counts.runs IS 'Runs of the agent its lint or verify pass judged.';
COMMENT ON COLUMN nightly_agent_counts.failing IS 'Of those, runs failing the grounding rules or the source check (or not checkable).';

CREATE TABLE IF NOT EXISTS nightly_rule_counts (
    nightly_id INTEGER,
    lint_id    INTEGER,
    code       VARCHAR,
    violations BIGINT,
    runs       BIGINT
);
COMMENT ON TABLE nightly_rule_counts IS 'Per nightly, per pass it ran (lint and verify) and code: violations and runs with one (every code, severity off included: a report leaves those out): the per-rule trend charts.';
COMMENT ON COLUMN nightly_rule_counts.nightly_id IS 'The nightly.';
COMMENT ON COLUMN nightly_rule_counts.lint_id IS 'Its lint or verify pass (lints.lint_id).';
COMMENT ON COLUMN nightly_rule_counts.code IS 'Rule, source-check or finding code.';
COMMENT ON COLUMN nightly_rule_counts.violations IS 'Violations of the code in that pass.';
COMMENT ON COLUMN nightly_rule_counts.runs IS 'Runs with at least one.';

CREATE TABLE IF NOT EXISTS nightly_counted (
    nightly_id INTEGER
);
COMMENT ON TABLE nightly_counted IS 'The nightlies whose rows of nightly_failing, nightly_agent_counts and nightly_rule_counts were recorded (by the nightly itself, or later from the history for a nightly of an older groundwork).';
COMMENT ON COLUMN nightly_counted.nightly_id IS 'The nightly.';

CREATE OR REPLACE VIEW failing_streaks AS
WITH finished AS (SELECT nightly_id FROM nightlies WHERE exit_status IN (0, 1)),
fails AS (SELECT nightly_id, invocation_id FROM nightly_changes WHERE failing),
breaks AS (
    SELECT x.nightly_id, x.invocation_id,
           max(f.nightly_id) FILTER (WHERE y.invocation_id IS NULL) AS last_break
    FROM fails x
    LEFT JOIN finished f ON f.nightly_id < x.nightly_id
    LEFT JOIN fails y ON y.nightly_id = f.nightly_id AND y.invocation_id = x.invocation_id
    GROUP BY x.nightly_id, x.invocation_id
)
SELECT b.nightly_id, b.invocation_id,
       coalesce((SELECT min(f.nightly_id) FROM finished f
                 WHERE f.nightly_id < b.nightly_id AND f.nightly_id > coalesce(b.last_break, 0)), b.nightly_id) AS since_nightly_id
FROM breaks b;
COMMENT ON VIEW failing_streaks IS 'The definition of nightly_failing, recomputed from the whole history (slow: every nightly''s nightly_changes): per nightly, each run failing in it and the first of the finished nightlies before it (and itself) from which on the run failed in every one. A nightly''s streak runs over the chain of its baselines: the finished nightlies before it.';
COMMENT ON COLUMN failing_streaks.nightly_id IS 'The nightly.';
COMMENT ON COLUMN failing_streaks.invocation_id IS 'A run failing in it.';
COMMENT ON COLUMN failing_streaks.since_nightly_id IS 'First nightly of the run''s unbroken failing streak up to this nightly.';
