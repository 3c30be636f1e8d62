-- Migrations: bring the tables of a warehouse created by an older groundwork to today's columns.
-- Applied first (groundwork.core.warehouse.apply_schema applies the files of sql/schema/ in file
-- name order), so the definitions that follow (10_tables.sql: every column, said once, with its
-- documentation) and the views reading these columns find them. On a new warehouse no table
-- exists yet and each statement does nothing (ALTER TABLE IF EXISTS); 10_tables.sql then creates
-- the tables with every column. A column added to a table of 10_tables.sql after a release gets
-- one line here, in the order it was added (so an old warehouse ends with the same column order).
-- tests/core/test_warehouse.py checks that an old warehouse migrated ends with a new one's columns.

-- Lint history: passes restricted to some rule codes (--rules), verdict reuse across lints.
ALTER TABLE IF EXISTS lints ADD COLUMN IF NOT EXISTS all_rules BOOLEAN;
ALTER TABLE IF EXISTS lint_verdicts ADD COLUMN IF NOT EXISTS ingest_id INTEGER;
ALTER TABLE IF EXISTS lint_verdicts ADD COLUMN IF NOT EXISTS reused_from INTEGER;
ALTER TABLE IF EXISTS lint_verdicts ADD COLUMN IF NOT EXISTS context_key VARCHAR;

-- Incremental ingest: the kind of scan and the runs/ watermark; where invocations.jsonl was read up to.
ALTER TABLE IF EXISTS ingests ADD COLUMN IF NOT EXISTS scan VARCHAR;
ALTER TABLE IF EXISTS ingests ADD COLUMN IF NOT EXISTS dir_mtime_ns BIGINT;
ALTER TABLE IF EXISTS archive_files ADD COLUMN IF NOT EXISTS lines BIGINT;
ALTER TABLE IF EXISTS archive_files ADD COLUMN IF NOT EXISTS tail_sha256 VARCHAR;

-- Runs: the envelope values the linter reads only past its early stops (docs/rules.md#early-stops).
ALTER TABLE IF EXISTS runs ADD COLUMN IF NOT EXISTS outcome_problem VARCHAR;
ALTER TABLE IF EXISTS runs ADD COLUMN IF NOT EXISTS evidence_problem VARCHAR;
ALTER TABLE IF EXISTS runs ADD COLUMN IF NOT EXISTS delegations_problem VARCHAR;

-- Verify history: verdict reuse across verify passes (the run rows and sources configuration judged).
ALTER TABLE IF EXISTS lints ADD COLUMN IF NOT EXISTS config_id INTEGER;
ALTER TABLE IF EXISTS verify_verdicts ADD COLUMN IF NOT EXISTS ingest_id INTEGER;

-- Verdict reuse after passes over some runs only (the watch): which passes judged every run.
ALTER TABLE IF EXISTS lints ADD COLUMN IF NOT EXISTS all_runs BOOLEAN;

-- A nightly with nothing changed records no pass (groundwork.checks.current): what each ingest
-- changed, and the latest ingest each pass read the runs after.
ALTER TABLE IF EXISTS ingests ADD COLUMN IF NOT EXISTS runs_changed INTEGER;
ALTER TABLE IF EXISTS lints ADD COLUMN IF NOT EXISTS ingest_id INTEGER;
-- Schema 4: the reports' per-nightly tables (45_reports.sql: nightly_failing, nightly_agent_counts,
-- nightly_rule_counts, nightly_counted) are new tables, created there; no column to add. reports/data.py keep_counts
-- fills them for the nightlies recorded before.
