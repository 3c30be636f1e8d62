-- baseline_ingest: the ingest of nightly $baseline, when its finding severities are those of
-- nightly $nightly (nightly_severities; otherwise no row: a run's failing may differ from the
-- baseline's without its verdicts differing).
SELECT b.ingest_id FROM nightlies b
WHERE b.nightly_id = $baseline
  AND NOT EXISTS (
      (SELECT code, severity FROM nightly_severities WHERE nightly_id = $nightly
       EXCEPT SELECT code, severity FROM nightly_severities WHERE nightly_id = $baseline)
      UNION ALL
      (SELECT code, severity FROM nightly_severities WHERE nightly_id = $baseline
       EXCEPT SELECT code, severity FROM nightly_severities WHERE nightly_id = $nightly))
