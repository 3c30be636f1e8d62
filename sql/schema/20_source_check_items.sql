-- The evidence items the source check (S0-S2, sql/rules/S*.sql; groundwork verify) reads.
CREATE OR REPLACE VIEW source_check_items AS
SELECT e.invocation_id,
       e.ord,
       e.source_id,
       e.source_id_json,
       e.snapshot_ref,
       e.snapshot_ref_json,
       e.content_hash,
       e.canonicalisation,
       e.canonicalisation_json,
       r.agent_id
FROM evidence e
JOIN runs r ON r.invocation_id = e.invocation_id
WHERE r.verifiable
  AND NOT (coalesce(r.grounding_mode IN ('input_only', 'none', 'delegation'), FALSE)
           AND (e.source_id LIKE 'input:%' OR e.source_id LIKE 'invocation:%'));
COMMENT ON VIEW source_check_items IS 'Evidence items the source check looks at (docs/rules.md#source-check): items of runs it can verify, minus input:/invocation: items of attested modes (input_only, none, delegation), which R2/D1/D2 already check.';
COMMENT ON COLUMN source_check_items.invocation_id IS 'The run.';
COMMENT ON COLUMN source_check_items.ord IS '0-based position in envelope.evidence (report order).';
COMMENT ON COLUMN source_check_items.source_id IS 'str() of source_id (the record id looked up in the copy).';
COMMENT ON COLUMN source_check_items.snapshot_ref IS 'str() of snapshot_ref (None when absent): the look-up key of the copy.';
COMMENT ON COLUMN source_check_items.canonicalisation_json IS 'Raw JSON of canonicalisation (null when absent): the unknown-canonicalisation message prints str() of this value, lone surrogates included.';
COMMENT ON COLUMN source_check_items.content_hash IS 'str() of content_hash, compared with the copy''s record hash.';
COMMENT ON COLUMN source_check_items.canonicalisation IS 'str() of canonicalisation: selects the record hash (json-sorted-utf8-v1 projects, the three identity names share one hash).';
COMMENT ON COLUMN source_check_items.agent_id IS 'The run''s agent (for drift summaries).';
