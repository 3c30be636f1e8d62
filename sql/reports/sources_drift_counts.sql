-- sources_drift_counts: runs per class of report_sources_drift (sources_drift.sql).
SELECT class, COUNT(*) AS n FROM report_sources_drift GROUP BY class
