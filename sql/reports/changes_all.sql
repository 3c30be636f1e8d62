-- changes_all: every nightly's rows of the view nightly_changes (docs/schema.md#nightly_changes).
-- reports/data.py state_sql makes it the CTE report_changes, which report_state reads for one
-- nightly (or changes_same_passes, their equal when the nightly's passes are its baseline's).
SELECT * FROM nightly_changes
