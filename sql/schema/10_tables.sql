-- groundwork warehouse schema: the only DDL of the project.
-- Applied by groundwork.core.warehouse.apply_schema(); every statement is idempotent.
-- Conventions:
--   * One row of `runs` per run folder, keyed by invocation_id (the folder name).
--   * str(v) below means Python's str() of the parsed JSON value (spec 0.3): the rules compare
--     these strings, exactly as the workbench does. `*_json` columns keep the raw JSON text of a
--     value (Python json.dumps form) so that templates can render its Python repr (spec 6.10).
--   * Times are UTC TIMESTAMP at microsecond precision; span ids carry no `0x`.
--   * Rules read these typed, flat tables only; all JSON work happens in ingest.
--   * Whole documents (envelope, request, span attributes, evidence content and elements) are
--     stored USING COMPRESSION zstd: no rule reads them, and DuckDB then skips trying its other
--     string methods on them at every checkpoint (an ingest's closing checkpoint: 0.38 -> 0.26 s
--     at 20,000 runs; the file 11% smaller). A warehouse created before keeps its compression.

CREATE TABLE IF NOT EXISTS schema_info (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);
INSERT OR REPLACE INTO schema_info VALUES ('schema_version', '1');
COMMENT ON TABLE schema_info IS 'Warehouse metadata; schema_version is bumped on every incompatible change.';
COMMENT ON COLUMN schema_info.key IS 'Metadata key, e.g. schema_version.';
COMMENT ON COLUMN schema_info.value IS 'Metadata value.';

-- ------------------------------------------------------------------------------------------
-- Ingest bookkeeping
-- ------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS ingests (
    ingest_id       INTEGER PRIMARY KEY,
    runs_dir        VARCHAR,
    started_at      TIMESTAMP,
    finished_at     TIMESTAMP,
    folders_seen    INTEGER,
    runs_loaded     INTEGER,
    runs_unchanged  INTEGER,
    runs_rejected   INTEGER,
    runs_missing    INTEGER,
    issues          INTEGER,
    tool_version    VARCHAR
);
COMMENT ON TABLE ingests IS 'One row per `groundwork ingest` (or nightly ingest step); counts reconcile: folders_seen = runs_loaded + runs_unchanged + runs_rejected.';
COMMENT ON COLUMN ingests.ingest_id IS 'Sequential id of the ingest.';
COMMENT ON COLUMN ingests.runs_dir IS 'Absolute path of the archive root that was ingested.';
COMMENT ON COLUMN ingests.started_at IS 'UTC time the ingest started.';
COMMENT ON COLUMN ingests.finished_at IS 'UTC time the ingest finished (NULL while running or if it was killed).';
COMMENT ON COLUMN ingests.folders_seen IS 'Entries of the archive root that looked like run folders.';
COMMENT ON COLUMN ingests.runs_loaded IS 'Runs (re)loaded by this ingest (new or changed).';
COMMENT ON COLUMN ingests.runs_unchanged IS 'Runs skipped because size, mtime and content hash were unchanged.';
COMMENT ON COLUMN ingests.runs_rejected IS 'Folders that could not be loaded as a run at all (recorded in ingest_issues).';
COMMENT ON COLUMN ingests.runs_missing IS 'Runs in the warehouse whose folder is no longer on disk (kept, marked missing).';
COMMENT ON COLUMN ingests.issues IS 'Number of ingest_issues rows recorded by this ingest.';
COMMENT ON COLUMN ingests.tool_version IS 'groundwork version that ran the ingest.';

CREATE TABLE IF NOT EXISTS ingest_issues (
    ingest_id      INTEGER,
    invocation_id  VARCHAR,
    path           VARCHAR,
    line           INTEGER,
    kind           VARCHAR,
    message        VARCHAR,
    effect         VARCHAR
);
COMMENT ON TABLE ingest_issues IS 'Everything ingest found wrong with the input: which file, which line, why. Issues of a run are replaced when the run is reloaded.';
COMMENT ON COLUMN ingest_issues.ingest_id IS 'The ingest that recorded the issue.';
COMMENT ON COLUMN ingest_issues.invocation_id IS 'Run folder the issue belongs to (NULL for archive-level issues).';
COMMENT ON COLUMN ingest_issues.path IS 'File or folder path, relative to the archive root.';
COMMENT ON COLUMN ingest_issues.line IS '1-based line number inside the file, NULL when the issue concerns the whole file.';
COMMENT ON COLUMN ingest_issues.kind IS 'Machine-readable issue kind: missing-file, empty-file, truncated, malformed-json, non-utf8, bom, missing-key, wrong-type, bad-time, naive-time, name-mismatch, duplicate-invocation-id, cycle, unreadable, symlink-outside, line-too-long, lone-surrogate, unexpected-entry, bad-name, internal-error.';
COMMENT ON COLUMN ingest_issues.message IS 'Human-readable explanation.';
COMMENT ON COLUMN ingest_issues.effect IS 'What the issue did to the run: rejected (folder not loaded, no runs row), unlintable (the workbench linter would crash or hang), unverifiable (its source check would crash), unlintable+unverifiable, none (recorded; the run is checked normally).';

CREATE TABLE IF NOT EXISTS run_files (
    invocation_id  VARCHAR,
    file_name      VARCHAR,
    size           BIGINT,
    mtime_ns       BIGINT,
    sha256         VARCHAR
);
COMMENT ON TABLE run_files IS 'Fingerprint of every file of every run folder, used to skip unchanged runs on re-ingest.';
COMMENT ON COLUMN run_files.invocation_id IS 'Run folder name.';
COMMENT ON COLUMN run_files.file_name IS 'Path inside the run folder, /-separated (envelope.json, spans.jsonl, crate/ro-crate-metadata.json, any other file found).';
COMMENT ON COLUMN run_files.size IS 'File size in bytes.';
COMMENT ON COLUMN run_files.mtime_ns IS 'Modification time in nanoseconds since the epoch.';
COMMENT ON COLUMN run_files.sha256 IS 'SHA-256 of the file bytes (NULL when the file could not be read).';

CREATE TABLE IF NOT EXISTS archive_files (
    path      VARCHAR,
    size      BIGINT,
    mtime_ns  BIGINT,
    sha256    VARCHAR
);
COMMENT ON TABLE archive_files IS 'Fingerprint of the archive-level files (invocations.jsonl, schemas/*.json), used to skip re-reading them when unchanged.';
COMMENT ON COLUMN archive_files.path IS 'Path relative to the archive root.';
COMMENT ON COLUMN archive_files.size IS 'File size in bytes.';
COMMENT ON COLUMN archive_files.mtime_ns IS 'Modification time in nanoseconds since the epoch.';
COMMENT ON COLUMN archive_files.sha256 IS 'SHA-256 of the file bytes.';

-- ------------------------------------------------------------------------------------------
-- Runs and their contents
-- ------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS runs (
    invocation_id              VARCHAR PRIMARY KEY,
    run_path                   VARCHAR,
    ingest_id                  INTEGER,
    missing                    BOOLEAN,
    lintable                   BOOLEAN,
    unlintable_reason          VARCHAR,
    verifiable                 BOOLEAN,
    unverifiable_reason        VARCHAR,
    envelope_invocation_id     VARCHAR,
    agent_id                   VARCHAR,
    agent_version              VARCHAR,
    completed_at               TIMESTAMP,
    grounding_mode             VARCHAR,
    grounding_mode_json        VARCHAR,
    grounding_mode_truthy      BOOLEAN,
    outcome_status             VARCHAR,
    succeeded                  BOOLEAN,
    problem_type               VARCHAR,
    withheld                   BOOLEAN,
    payload_type               VARCHAR,
    payload_has_schema_class   BOOLEAN,
    payload_schema_class_json  VARCHAR,
    payload_has_grounded_on    BOOLEAN,
    evidence_count             INTEGER,
    delegation_count           INTEGER,
    conversation_id            VARCHAR,
    parent_invocation_id       VARCHAR,
    telemetry_trace_id         VARCHAR,
    envelope_hash              VARCHAR,
    input_hash                 VARCHAR,
    issued_at                  TIMESTAMP,
    span_format                VARCHAR,
    span_count                 INTEGER,
    recorded_grounding         VARCHAR,
    recorded_sources           VARCHAR,
    envelope_json              JSON USING COMPRESSION zstd,
    request_json               JSON USING COMPRESSION zstd,
    files_fingerprint          VARCHAR,
    content_fingerprint        VARCHAR,
    parser_version             INTEGER
);
COMMENT ON TABLE runs IS 'One row per run folder ever ingested (never deleted; a folder gone from disk is marked missing).';
COMMENT ON COLUMN runs.invocation_id IS 'Run folder name (normally the UUIDv7 invocation id).';
COMMENT ON COLUMN runs.run_path IS 'Path of the run folder relative to the archive root.';
COMMENT ON COLUMN runs.ingest_id IS 'The ingest that last (re)loaded this run.';
COMMENT ON COLUMN runs.missing IS 'True when the folder was not on disk at the last ingest of its archive.';
COMMENT ON COLUMN runs.lintable IS 'False when the workbench linter itself could not lint this run (it would crash or hang); the reason is in unlintable_reason.';
COMMENT ON COLUMN runs.unlintable_reason IS 'Why the run cannot be linted: the first crash, as <path>[ line N]: <message>[ (and N more)], e.g. <id>/envelope.json: evidence[0] is a JSON string, not an object. The matching ingest_issues rows have effect unlintable or unlintable+unverifiable.';
COMMENT ON COLUMN runs.verifiable IS 'False when the workbench source check would crash on this envelope (e.g. grounding_mode is a list or object, spec 10 C5).';
COMMENT ON COLUMN runs.unverifiable_reason IS 'Why the source check cannot run on this envelope (same form as unlintable_reason).';
COMMENT ON COLUMN runs.envelope_invocation_id IS 'str() of envelope.invocation_id (None when absent); used for the input pair input:<id>.';
COMMENT ON COLUMN runs.agent_id IS 'envelope.agent_id (str()), NULL when absent.';
COMMENT ON COLUMN runs.agent_version IS 'envelope.agent_version (str()), NULL when absent.';
COMMENT ON COLUMN runs.completed_at IS 'envelope.completed_at as UTC timestamp, NULL when absent or unparsable.';
COMMENT ON COLUMN runs.grounding_mode IS 'str() of envelope.grounding_mode; NULL when absent or null.';
COMMENT ON COLUMN runs.grounding_mode_json IS 'Raw JSON of envelope.grounding_mode (null when absent), for repr in G0 messages.';
COMMENT ON COLUMN runs.grounding_mode_truthy IS 'Python truthiness of envelope.grounding_mode (report mode label is "unknown mode" when false).';
COMMENT ON COLUMN runs.outcome_status IS 'str() of envelope.outcome.status when outcome is an object with status; NULL otherwise.';
COMMENT ON COLUMN runs.succeeded IS 'True when outcome is an object whose status is exactly the string succeeded.';
COMMENT ON COLUMN runs.problem_type IS 'envelope.problem.type, NULL when absent.';
COMMENT ON COLUMN runs.withheld IS 'True when the stored envelope is a conductor-withheld grounding-violation envelope (spec 3.11).';
COMMENT ON COLUMN runs.payload_type IS 'JSON type of envelope.payload: object, array, string, number, boolean; NULL when absent or null.';
COMMENT ON COLUMN runs.payload_has_schema_class IS 'Payload is an object with a schema_class key.';
COMMENT ON COLUMN runs.payload_schema_class_json IS 'Raw JSON of payload.schema_class (NULL when absent), for repr.';
COMMENT ON COLUMN runs.payload_has_grounded_on IS 'Payload is an object with a root grounded_on key.';
COMMENT ON COLUMN runs.evidence_count IS 'Number of evidence elements (0 for absent/null/falsy evidence).';
COMMENT ON COLUMN runs.delegation_count IS 'Number of object elements of envelope.delegations.';
COMMENT ON COLUMN runs.conversation_id IS 'envelope.conversation_id, NULL when absent.';
COMMENT ON COLUMN runs.parent_invocation_id IS 'envelope.parent_invocation_id (delegated children), NULL when absent.';
COMMENT ON COLUMN runs.telemetry_trace_id IS 'envelope.telemetry.trace_id, NULL when absent.';
COMMENT ON COLUMN runs.envelope_hash IS 'dd-envelope-json-v1 hash of the stored envelope document (spec 4.4).';
COMMENT ON COLUMN runs.input_hash IS 'dd-input-json-v1 hash of request.json input (spec 4.3); NULL without a readable request.';
COMMENT ON COLUMN runs.issued_at IS 'request.json issued_at as UTC timestamp.';
COMMENT ON COLUMN runs.span_format IS 'Format of spans.jsonl lines: sdk (OpenTelemetry Python to_json), otlp (OTLP/JSON resourceSpans), mixed; NULL without spans.';
COMMENT ON COLUMN runs.span_count IS 'Number of span records loaded from spans.jsonl.';
COMMENT ON COLUMN runs.recorded_grounding IS 'Exact text of the recorded grounding.txt (NULL when absent).';
COMMENT ON COLUMN runs.recorded_sources IS 'Exact text of the recorded sources.txt (NULL when absent).';
COMMENT ON COLUMN runs.envelope_json IS 'The stored envelope document.';
COMMENT ON COLUMN runs.request_json IS 'The stored request document.';
COMMENT ON COLUMN runs.files_fingerprint IS 'SHA-256 over the (path, size, mtime) of every file of the run folder; equal on re-ingest -> the run is skipped unread.';
COMMENT ON COLUMN runs.content_fingerprint IS 'SHA-256 over the (path, SHA-256 of bytes) of every file of the run folder; equal -> unchanged even if mtimes moved.';
COMMENT ON COLUMN runs.parser_version IS 'Version of the ingest parser that loaded the run; runs loaded by another version are reloaded.';

CREATE TABLE IF NOT EXISTS spans (
    invocation_id           VARCHAR,
    ord                     INTEGER,
    line_no                 INTEGER,
    source_format           VARCHAR,
    name                    VARCHAR,
    name_json               VARCHAR,
    span_id                 VARCHAR,
    trace_id                VARCHAR,
    parent_id               VARCHAR,
    start_time              TIMESTAMP,
    end_time                TIMESTAMP,
    dd_operation            VARCHAR,
    dd_agent_id             VARCHAR,
    dd_source_id            VARCHAR,
    dd_content_hash         VARCHAR,
    dd_model_id             VARCHAR,
    dd_input_tokens         VARCHAR,
    dd_output_tokens        VARCHAR,
    dd_outcome              VARCHAR,
    dd_grounding_mode       VARCHAR,
    dd_input_hash           VARCHAR,
    dd_grounding_mode_json  VARCHAR,
    dd_grounding_mode_is_string BOOLEAN,
    status_code             VARCHAR,
    service_name            VARCHAR,
    attributes              JSON USING COMPRESSION zstd,
    start_unix_nano         BIGINT,
    end_unix_nano           BIGINT,
    start_workbench_ns      DOUBLE,
    end_workbench_ns        DOUBLE
);
COMMENT ON TABLE spans IS 'One row per span record of a run''s spans.jsonl (both the SDK to_json and OTLP/JSON line forms).';
COMMENT ON COLUMN spans.invocation_id IS 'Run folder the span belongs to.';
COMMENT ON COLUMN spans.ord IS '0-based position of the span record in file order (the order the workbench reads them).';
COMMENT ON COLUMN spans.line_no IS '1-based physical line of spans.jsonl the record came from.';
COMMENT ON COLUMN spans.source_format IS 'sdk or otlp.';
COMMENT ON COLUMN spans.name IS 'str() of the span name.';
COMMENT ON COLUMN spans.name_json IS 'Raw JSON of the span name, for repr in G0 messages.';
COMMENT ON COLUMN spans.span_id IS 'context.span_id with one leading 0x stripped (no case folding).';
COMMENT ON COLUMN spans.trace_id IS 'context.trace_id with one leading 0x stripped.';
COMMENT ON COLUMN spans.parent_id IS 'parent_id with one leading 0x stripped; NULL when falsy (null, missing, "", 0, false). A truthy non-string (e.g. 99) is stored as its str() and makes the run unlintable (the workbench crashes). OTLP: parentSpanId, "" = no parent.';
COMMENT ON COLUMN spans.start_time IS 'start_time as a UTC timestamp (microseconds).';
COMMENT ON COLUMN spans.end_time IS 'end_time as a UTC timestamp (microseconds).';
COMMENT ON COLUMN spans.dd_operation IS 'str() of attribute dd.operation; NULL when the key is absent.';
COMMENT ON COLUMN spans.dd_agent_id IS 'str() of attribute dd.agent_id; NULL when absent.';
COMMENT ON COLUMN spans.dd_source_id IS 'str() of attribute dd.source_id; NULL when absent (the rules then use the string None).';
COMMENT ON COLUMN spans.dd_content_hash IS 'str() of attribute dd.content_hash; NULL when absent (the rules then use the string None).';
COMMENT ON COLUMN spans.dd_model_id IS 'str() of attribute dd.model_id; NULL when absent.';
COMMENT ON COLUMN spans.dd_input_tokens IS 'str() of attribute dd.input_tokens; NULL when absent.';
COMMENT ON COLUMN spans.dd_output_tokens IS 'str() of attribute dd.output_tokens; NULL when absent.';
COMMENT ON COLUMN spans.dd_outcome IS 'str() of attribute dd.outcome (conductor key); NULL when absent.';
COMMENT ON COLUMN spans.dd_grounding_mode IS 'str() of attribute dd.grounding_mode (conductor key); NULL when absent.';
COMMENT ON COLUMN spans.dd_input_hash IS 'str() of attribute dd.input_hash (conductor key); NULL when absent.';
COMMENT ON COLUMN spans.dd_grounding_mode_json IS 'Raw JSON of attribute dd.grounding_mode (NULL when absent), for repr.';
COMMENT ON COLUMN spans.dd_grounding_mode_is_string IS 'True when attribute dd.grounding_mode is a JSON string (the root-mode check is not stringified).';
COMMENT ON COLUMN spans.status_code IS 'status.status_code (UNSET, OK, ERROR); ignored by every rule.';
COMMENT ON COLUMN spans.service_name IS 'resource attribute service.name; ignored by every rule.';
COMMENT ON COLUMN spans.attributes IS 'All span attributes as a JSON object (OTLP key/value lists flattened).';
COMMENT ON COLUMN spans.start_unix_nano IS 'Start as integer nanoseconds since the epoch: exact for OTLP lines, start_time x 1000 for SDK lines; NULL outside the BIGINT range (before 1678 or after 2261).';
COMMENT ON COLUMN spans.end_unix_nano IS 'End as integer nanoseconds since the epoch (see start_unix_nano).';
COMMENT ON COLUMN spans.start_workbench_ns IS 'The workbench''s own time key for start_time: timestamp() x 1e9 as a double (it compares int() of it). trunc(start_workbench_ns) < trunc(x) orders spans exactly as the workbench does, also beyond ~2242 where the double merges adjacent microseconds that start_time keeps apart. OTLP: the nanoseconds as a double.';
COMMENT ON COLUMN spans.end_workbench_ns IS 'The workbench''s own time key for end_time (see start_workbench_ns).';

CREATE TABLE IF NOT EXISTS payload_refs (
    invocation_id   VARCHAR,
    ord             INTEGER,
    path            VARCHAR,
    kind            VARCHAR,
    source_id       VARCHAR,
    content_hash    VARCHAR,
    value_json      VARCHAR
);
COMMENT ON TABLE payload_refs IS 'Every grounded_on value found by the recursive payload walk of spec 6.5, in discovery order: well-formed references, malformed elements and non-list values.';
COMMENT ON COLUMN payload_refs.invocation_id IS 'Run folder.';
COMMENT ON COLUMN payload_refs.ord IS '0-based discovery order over the whole payload (spec 6.5).';
COMMENT ON COLUMN payload_refs.path IS 'JSONPath of the element or value, e.g. $.items[0].grounded_on[1].';
COMMENT ON COLUMN payload_refs.kind IS 'ref (well-formed: object with string source_id and content_hash), malformed (a list element that is not), not_list (a grounded_on value that is not a list).';
COMMENT ON COLUMN payload_refs.source_id IS 'source_id of a well-formed reference.';
COMMENT ON COLUMN payload_refs.content_hash IS 'content_hash of a well-formed reference.';
COMMENT ON COLUMN payload_refs.value_json IS 'Raw JSON of the element (malformed) or value (not_list), for repr.';

CREATE TABLE IF NOT EXISTS evidence (
    invocation_id       VARCHAR,
    ord                 INTEGER,
    source_id           VARCHAR,
    source_id_json      VARCHAR,
    content_hash        VARCHAR,
    canonicalisation    VARCHAR,
    canonicalisation_json VARCHAR,
    snapshot_ref        VARCHAR,
    source_uri          VARCHAR,
    retrieved_at        VARCHAR,
    hash_algorithm      VARCHAR,
    content_type        VARCHAR,
    content_json        JSON USING COMPRESSION zstd,
    computed_hash       VARCHAR,
    canonical_error     VARCHAR,
    item_type           VARCHAR,
    item_json           VARCHAR USING COMPRESSION zstd,
    snapshot_ref_json   VARCHAR
);
COMMENT ON TABLE evidence IS 'One row per envelope evidence element, in order, with the hash of its content recomputed under its canonicalisation (spec 4).';
COMMENT ON COLUMN evidence.invocation_id IS 'Run folder.';
COMMENT ON COLUMN evidence.ord IS '0-based position in envelope.evidence.';
COMMENT ON COLUMN evidence.source_id IS 'str() of source_id; the string None when absent or null.';
COMMENT ON COLUMN evidence.source_id_json IS 'Raw JSON of source_id (null when absent), for repr.';
COMMENT ON COLUMN evidence.content_hash IS 'str() of content_hash; None when absent.';
COMMENT ON COLUMN evidence.canonicalisation IS 'str() of canonicalisation; None when absent.';
COMMENT ON COLUMN evidence.canonicalisation_json IS 'Raw JSON of canonicalisation (null when absent), for repr.';
COMMENT ON COLUMN evidence.snapshot_ref IS 'str() of snapshot_ref; the string None when absent (the source check looks that up, spec 5.4).';
COMMENT ON COLUMN evidence.source_uri IS 'source_uri as stored (str()), NULL when absent.';
COMMENT ON COLUMN evidence.retrieved_at IS 'retrieved_at as stored, NULL when absent.';
COMMENT ON COLUMN evidence.hash_algorithm IS 'hash_algorithm as stored (never checked), NULL when absent.';
COMMENT ON COLUMN evidence.content_type IS 'JSON type of content: object, array, string, number, boolean; NULL when absent or null (E1 skips those).';
COMMENT ON COLUMN evidence.content_json IS 'The content document as stored.';
COMMENT ON COLUMN evidence.computed_hash IS 'SHA-256 of content under its canonicalisation (Python-compatible canonical JSON); NULL when content is not an object or hashing failed.';
COMMENT ON COLUMN evidence.item_type IS 'JSON type of the evidence element: object normally; anything else (null, string, ...) makes the run unlintable and unverifiable, and then every other column but item_json is NULL.';
COMMENT ON COLUMN evidence.item_json IS 'Raw JSON of the whole evidence element (Python json.dumps form).';
COMMENT ON COLUMN evidence.snapshot_ref_json IS 'Raw JSON of snapshot_ref (null when absent), for repr in S1/S2 messages (spec 5.4: an absent ref prints None).';
COMMENT ON COLUMN evidence.canonical_error IS 'Hashing error text when computed_hash is NULL for an object content (e.g. unknown canonicalisation ...; registered: [...]).';

CREATE TABLE IF NOT EXISTS delegations (
    invocation_id            VARCHAR,
    ord                      INTEGER,
    delegated_invocation_id  VARCHAR,
    content_hash             VARCHAR,
    delegated_agent_id       VARCHAR,
    delegated_agent_version  VARCHAR,
    delegated_status         VARCHAR
);
COMMENT ON TABLE delegations IS 'One row per object element of envelope.delegations (spec 3.8); non-object elements are ignored as by the workbench (spec 10 C3).';
COMMENT ON COLUMN delegations.invocation_id IS 'The delegating (parent) run.';
COMMENT ON COLUMN delegations.ord IS '0-based position in envelope.delegations.';
COMMENT ON COLUMN delegations.delegated_invocation_id IS 'str() of delegated_invocation_id (None when absent).';
COMMENT ON COLUMN delegations.content_hash IS 'str() of content_hash (None when absent): the conductor''s dd-envelope-json-v1 hash of the child envelope.';
COMMENT ON COLUMN delegations.delegated_agent_id IS 'delegated_agent_id as stored.';
COMMENT ON COLUMN delegations.delegated_agent_version IS 'delegated_agent_version as stored.';
COMMENT ON COLUMN delegations.delegated_status IS 'delegated_status as stored.';

CREATE TABLE IF NOT EXISTS invocation_index (
    line_no        INTEGER,
    invocation_id  VARCHAR,
    agent_id       VARCHAR,
    outcome_status VARCHAR,
    completed_at   TIMESTAMP,
    envelope_hash  VARCHAR
);
COMMENT ON TABLE invocation_index IS 'Lines of runs/invocations.jsonl (the store''s index), replaced on every ingest of the archive.';
COMMENT ON COLUMN invocation_index.line_no IS '1-based line number in invocations.jsonl.';
COMMENT ON COLUMN invocation_index.invocation_id IS 'invocation_id of the indexed envelope.';
COMMENT ON COLUMN invocation_index.agent_id IS 'agent_id of the indexed envelope.';
COMMENT ON COLUMN invocation_index.outcome_status IS 'outcome.status of the indexed envelope.';
COMMENT ON COLUMN invocation_index.completed_at IS 'completed_at of the indexed envelope.';
COMMENT ON COLUMN invocation_index.envelope_hash IS 'dd-envelope-json-v1 hash of the indexed envelope document.';

CREATE TABLE IF NOT EXISTS class_schemas (
    digest          VARCHAR PRIMARY KEY,
    computed_digest VARCHAR,
    schema_json     JSON
);
COMMENT ON TABLE class_schemas IS 'runs/schemas/<digest>.json: class schemas kept by the store (spec 1.3).';
COMMENT ON COLUMN class_schemas.digest IS 'Digest named by the file name.';
COMMENT ON COLUMN class_schemas.computed_digest IS 'dd-json-document-v1 hash of the file content (should equal digest).';
COMMENT ON COLUMN class_schemas.schema_json IS 'The schema document.';

-- ------------------------------------------------------------------------------------------
-- Check history (append-only): lint and verify results
-- ------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS lints (
    lint_id        INTEGER PRIMARY KEY,
    kind           VARCHAR,
    started_at     TIMESTAMP,
    finished_at    TIMESTAMP,
    ruleset_hash   VARCHAR,
    rules          VARCHAR,
    tool_version   VARCHAR,
    sources_path   VARCHAR,
    runs_checked   INTEGER,
    runs_failed    INTEGER
);
COMMENT ON TABLE lints IS 'Append-only history: one row per lint or verify pass over the warehouse.';
COMMENT ON COLUMN lints.lint_id IS 'Sequential id of the pass.';
COMMENT ON COLUMN lints.kind IS 'lint (grounding rules) or verify (source check).';
COMMENT ON COLUMN lints.started_at IS 'UTC start time.';
COMMENT ON COLUMN lints.finished_at IS 'UTC end time.';
COMMENT ON COLUMN lints.ruleset_hash IS 'SHA-256 over the rule files used (code + SQL text), so verdicts can be attributed to a rule set.';
COMMENT ON COLUMN lints.rules IS 'Comma-separated rule codes applied.';
COMMENT ON COLUMN lints.tool_version IS 'groundwork version.';
COMMENT ON COLUMN lints.sources_path IS 'sources.yaml used by a verify pass (NULL for lint).';
COMMENT ON COLUMN lints.runs_checked IS 'Runs given a verdict.';
COMMENT ON COLUMN lints.runs_failed IS 'Runs that failed (or could not be checked).';

CREATE TABLE IF NOT EXISTS lint_verdicts (
    lint_id           INTEGER,
    invocation_id     VARCHAR,
    status            VARCHAR,
    passed            BOOLEAN,
    mode              VARCHAR,
    retrieval_count   INTEGER,
    chat_count        INTEGER,
    summary           VARCHAR,
    reason            VARCHAR
);
COMMENT ON TABLE lint_verdicts IS 'One row per run per lint pass (passes too).';
COMMENT ON COLUMN lint_verdicts.lint_id IS 'The lint pass.';
COMMENT ON COLUMN lint_verdicts.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_verdicts.status IS 'passed, failed or unlintable (never passed for a run the workbench could not lint).';
COMMENT ON COLUMN lint_verdicts.passed IS 'True only for status passed.';
COMMENT ON COLUMN lint_verdicts.mode IS 'Report mode (NULL = unknown mode).';
COMMENT ON COLUMN lint_verdicts.retrieval_count IS 'Retrieval spans counted by the linter.';
COMMENT ON COLUMN lint_verdicts.chat_count IS 'Chat spans counted by the linter.';
COMMENT ON COLUMN lint_verdicts.summary IS 'Exact grounding.txt text the workbench would write, without the final newline (NULL when unlintable).';
COMMENT ON COLUMN lint_verdicts.reason IS 'Why the run is unlintable.';

CREATE TABLE IF NOT EXISTS lint_violations (
    lint_id        INTEGER,
    invocation_id  VARCHAR,
    seq            INTEGER,
    code           VARCHAR,
    message        VARCHAR
);
COMMENT ON TABLE lint_violations IS 'One row per violation (lint: grounding rules; verify: S1/S2) and per groundwork-only finding, in report order.';
COMMENT ON COLUMN lint_violations.lint_id IS 'The pass.';
COMMENT ON COLUMN lint_violations.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_violations.seq IS '0-based position in the report (findings beyond the workbench follow the compatible violations).';
COMMENT ON COLUMN lint_violations.code IS 'Rule code (G0 ... D3, S1, S2) or groundwork finding code (GW...).';
COMMENT ON COLUMN lint_violations.message IS 'Exact message text.';

CREATE TABLE IF NOT EXISTS verify_verdicts (
    lint_id          INTEGER,
    invocation_id    VARCHAR,
    status           VARCHAR,
    passed           BOOLEAN,
    verified         INTEGER,
    unresolved_count INTEGER,
    summary          VARCHAR,
    reason           VARCHAR
);
COMMENT ON TABLE verify_verdicts IS 'One row per run per verify pass.';
COMMENT ON COLUMN verify_verdicts.lint_id IS 'The verify pass (lints.kind = verify).';
COMMENT ON COLUMN verify_verdicts.invocation_id IS 'The run.';
COMMENT ON COLUMN verify_verdicts.status IS 'passed, failed or unverifiable.';
COMMENT ON COLUMN verify_verdicts.passed IS 'True only for status passed (unresolved items never fail).';
COMMENT ON COLUMN verify_verdicts.verified IS 'Evidence items verified against a pinned copy.';
COMMENT ON COLUMN verify_verdicts.unresolved_count IS 'Evidence items without an independent copy.';
COMMENT ON COLUMN verify_verdicts.summary IS 'Exact sources.txt text, without the final newline.';
COMMENT ON COLUMN verify_verdicts.reason IS 'Why the run could not be verified.';

CREATE TABLE IF NOT EXISTS verify_unresolved (
    lint_id        INTEGER,
    invocation_id  VARCHAR,
    seq            INTEGER,
    item           VARCHAR
);
COMMENT ON TABLE verify_unresolved IS 'Unresolved evidence items per run per verify pass, as printed: <sid> (<ref>).';
COMMENT ON COLUMN verify_unresolved.lint_id IS 'The verify pass.';
COMMENT ON COLUMN verify_unresolved.invocation_id IS 'The run.';
COMMENT ON COLUMN verify_unresolved.seq IS '0-based position in evidence order.';
COMMENT ON COLUMN verify_unresolved.item IS 'The unresolved item text.';

-- ------------------------------------------------------------------------------------------
-- Source copies (helper D: groundwork/checks/sources.py, spec 5.1-5.3)
-- ------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS source_configs (
    config_id   INTEGER PRIMARY KEY,
    path        VARCHAR,
    sha256      VARCHAR,
    loaded_at   TIMESTAMP,
    entries     INTEGER
);
COMMENT ON TABLE source_configs IS 'One row per distinct sources.yaml loaded (same absolute path and same bytes reuse the row).';
COMMENT ON COLUMN source_configs.config_id IS 'Sequential id of the loaded configuration.';
COMMENT ON COLUMN source_configs.path IS 'Absolute path of the sources.yaml.';
COMMENT ON COLUMN source_configs.sha256 IS 'SHA-256 of the sources.yaml bytes.';
COMMENT ON COLUMN source_configs.loaded_at IS 'UTC time the configuration was first loaded.';
COMMENT ON COLUMN source_configs.entries IS 'Number of entries of its sources list.';

CREATE TABLE IF NOT EXISTS source_refs (
    config_id     INTEGER,
    entry_index   INTEGER,
    snapshot_ref  VARCHAR,
    copy_id       VARCHAR,
    path          VARCHAR,
    file          VARCHAR,
    id_field      VARCHAR,
    sha256        VARCHAR
);
COMMENT ON TABLE source_refs IS 'Which pinned copy serves which evidence snapshot_ref under a configuration: one row per listed snapshot_ref (spec 5.1).';
COMMENT ON COLUMN source_refs.config_id IS 'The configuration (source_configs).';
COMMENT ON COLUMN source_refs.entry_index IS '0-based position of the entry in the sources list.';
COMMENT ON COLUMN source_refs.snapshot_ref IS 'str() of one listed snapshot_ref value; evidence is looked up by str(snapshot_ref), so absent refs look up the string None.';
COMMENT ON COLUMN source_refs.copy_id IS 'The copy serving the ref (source_copies.copy_id).';
COMMENT ON COLUMN source_refs.path IS 'The data file path as written in sources.yaml.';
COMMENT ON COLUMN source_refs.file IS 'The data file path resolved against the directory of sources.yaml.';
COMMENT ON COLUMN source_refs.id_field IS 'str() of the entry''s id_field: the record key whose string value is the source_id.';
COMMENT ON COLUMN source_refs.sha256 IS 'The pinned SHA-256 of the data file bytes.';

CREATE TABLE IF NOT EXISTS source_copies (
    copy_id        VARCHAR PRIMARY KEY,
    sha256         VARCHAR,
    id_field       VARCHAR,
    format         VARCHAR,
    size           BIGINT,
    records_read   INTEGER,
    record_count   INTEGER,
    loaded_at      TIMESTAMP
);
COMMENT ON TABLE source_copies IS 'One row per pinned data file (per id field) whose records are in source_records; loaded once, whatever the configuration that names it.';
COMMENT ON COLUMN source_copies.copy_id IS '<sha256>:<id_field>: the pinned bytes and the key that indexes them.';
COMMENT ON COLUMN source_copies.sha256 IS 'SHA-256 of the data file bytes (equal to its pin; checked before loading).';
COMMENT ON COLUMN source_copies.id_field IS 'Record key whose string value is the record id.';
COMMENT ON COLUMN source_copies.format IS 'json-array (text starts with [ after leading whitespace) or jsonl (spec 5.2).';
COMMENT ON COLUMN source_copies.size IS 'File size in bytes.';
COMMENT ON COLUMN source_copies.records_read IS 'Records in the file, duplicate ids included.';
COMMENT ON COLUMN source_copies.record_count IS 'Distinct record ids (a later duplicate id wins).';
COMMENT ON COLUMN source_copies.loaded_at IS 'UTC time the copy was loaded.';

CREATE TABLE IF NOT EXISTS source_records (
    copy_id                 VARCHAR,
    record_id               VARCHAR,
    ord                     INTEGER,
    hash_identity           VARCHAR,
    hash_identity_error     VARCHAR,
    hash_fairsharing        VARCHAR,
    hash_fairsharing_error  VARCHAR,
    record_json             VARCHAR
);
COMMENT ON TABLE source_records IS 'Every record of every pinned copy, keyed by (copy_id, record_id), with its hash under each canonicalisation (spec 4.2).';
COMMENT ON COLUMN source_records.copy_id IS 'The copy (source_copies).';
COMMENT ON COLUMN source_records.record_id IS 'The record''s id_field value (the source_id evidence cites).';
COMMENT ON COLUMN source_records.ord IS '0-based position of the record in the file (the last one of a duplicated id).';
COMMENT ON COLUMN source_records.hash_identity IS 'SHA-256 of the whole record''s canonical bytes: its hash under dd-json-document-v1, dd-input-json-v1 and dd-envelope-json-v1; NULL when it cannot be encoded.';
COMMENT ON COLUMN source_records.hash_identity_error IS 'Why hash_identity is NULL (exact error text the workbench prints after S2: evidence ...: ).';
COMMENT ON COLUMN source_records.hash_fairsharing IS 'SHA-256 of the record''s json-sorted-utf8-v1 projection (9 FAIRsharing fields, lists as sorted str() items).';
COMMENT ON COLUMN source_records.hash_fairsharing_error IS 'Why hash_fairsharing is NULL.';
COMMENT ON COLUMN source_records.record_json IS 'The record as compact JSON with sorted keys (Python json.dumps form).';

CREATE OR REPLACE VIEW source_check_items AS
SELECT e.invocation_id,
       e.ord,
       e.source_id,
       e.source_id_json,
       e.snapshot_ref,
       e.snapshot_ref_json,
       e.content_hash,
       e.canonicalisation,
       r.agent_id
FROM evidence e
JOIN runs r ON r.invocation_id = e.invocation_id
WHERE r.verifiable
  AND NOT (coalesce(r.grounding_mode IN ('input_only', 'none', 'delegation'), FALSE)
           AND (e.source_id LIKE 'input:%' OR e.source_id LIKE 'invocation:%'));
COMMENT ON VIEW source_check_items IS 'Evidence items the source check looks at (spec 5.4 steps 1-2): items of runs it can verify, minus input:/invocation: items of attested modes (input_only, none, delegation), which R2/D1/D2 already check.';
COMMENT ON COLUMN source_check_items.invocation_id IS 'The run.';
COMMENT ON COLUMN source_check_items.ord IS '0-based position in envelope.evidence (report order).';
COMMENT ON COLUMN source_check_items.source_id IS 'str() of source_id (the record id looked up in the copy).';
COMMENT ON COLUMN source_check_items.snapshot_ref IS 'str() of snapshot_ref (None when absent): the look-up key of the copy.';
COMMENT ON COLUMN source_check_items.content_hash IS 'str() of content_hash, compared with the copy''s record hash.';
COMMENT ON COLUMN source_check_items.canonicalisation IS 'str() of canonicalisation: selects the record hash (json-sorted-utf8-v1 projects, the three identity names share one hash).';
COMMENT ON COLUMN source_check_items.agent_id IS 'The run''s agent (for drift summaries).';

-- ------------------------------------------------------------------------------------------
-- Nightly job history (helper E: groundwork/jobs/nightly.py). One row per `groundwork nightly`;
-- "new / resolved / still failing" compare a nightly's lint and verify passes with those of
-- the previous nightly that finished (exit status 0 or 1).
-- ------------------------------------------------------------------------------------------

CREATE TABLE IF NOT EXISTS nightlies (
    nightly_id          INTEGER PRIMARY KEY,
    started_at          TIMESTAMP,
    finished_at         TIMESTAMP,
    runs_dir            VARCHAR,
    out_dir             VARCHAR,
    ingest_id           INTEGER,
    lint_id             INTEGER,
    verify_id           INTEGER,
    baseline_nightly_id INTEGER,
    baseline_lint_id    INTEGER,
    baseline_verify_id  INTEGER,
    runs_failing        INTEGER,
    new_failing         INTEGER,
    resolved            INTEGER,
    still_failing       INTEGER,
    exit_status         INTEGER,
    error               VARCHAR
);
COMMENT ON TABLE nightlies IS 'One row per `groundwork nightly` job; a row with exit_status 0 or 1 is a finished nightly and the baseline of the next one.';
COMMENT ON COLUMN nightlies.nightly_id IS 'Sequential id of the nightly job.';
COMMENT ON COLUMN nightlies.started_at IS 'UTC time the job started.';
COMMENT ON COLUMN nightlies.finished_at IS 'UTC time the job finished (NULL while running or if it was killed).';
COMMENT ON COLUMN nightlies.runs_dir IS 'Absolute path of the archive root the job ingested.';
COMMENT ON COLUMN nightlies.out_dir IS 'Absolute path of the report directory the job wrote.';
COMMENT ON COLUMN nightlies.ingest_id IS 'The ingest the job ran (ingests.ingest_id).';
COMMENT ON COLUMN nightlies.lint_id IS 'The lint pass the job ran (lints.lint_id, kind lint).';
COMMENT ON COLUMN nightlies.verify_id IS 'The verify pass the job ran (lints.lint_id, kind verify); NULL without --sources.';
COMMENT ON COLUMN nightlies.baseline_nightly_id IS 'The previous finished nightly this one was compared with (NULL for the first).';
COMMENT ON COLUMN nightlies.baseline_lint_id IS 'lint_id of that baseline nightly.';
COMMENT ON COLUMN nightlies.baseline_verify_id IS 'verify_id of that baseline nightly.';
COMMENT ON COLUMN nightlies.runs_failing IS 'Runs failing the grounding rules or the source check (or not checkable) in this nightly.';
COMMENT ON COLUMN nightlies.new_failing IS 'Runs failing now that did not fail that check in the baseline (new runs included).';
COMMENT ON COLUMN nightlies.resolved IS 'Runs failing in the baseline that pass every check now.';
COMMENT ON COLUMN nightlies.still_failing IS 'Runs failing both in the baseline and now (and not new in another check).';
COMMENT ON COLUMN nightlies.exit_status IS '0 nothing new fails, 1 new violations, 2 the job could not be done; NULL while running.';
COMMENT ON COLUMN nightlies.error IS 'One-line reason when exit_status is 2.';

-- ==========================================================================================
-- Grounding lint (helper C: sql/rules/, groundwork/checks/rules.py, groundwork/checks/lint.py)
-- ==========================================================================================
-- Derived relations of spec 6.1, read by the rule files in sql/rules/. Each is a plain view here,
-- so any rule file also runs by hand against the warehouse. During a lint the runner
-- (groundwork.checks.rules.materialised) re-creates each one from its own SQL under the same name in an
-- in-memory database attached for the pass, restricted to the runs being linted: as a table
-- (most of them, so the walk runs once per lint, not once per rule) or as a view (lint_spans,
-- lint_grounded: cheap, and their readers need different columns). The rule queries run on
-- cursors whose search_path puts that database first, so they read those relations.
-- A warehouse file can keep them between lints, as tables (lint_spans too) in the schema
-- lint_store that groundwork.checks.rules.keep_derived builds (at the end of the nightly job, or after
-- `groundwork lint --keep-derived` has printed): stamped with the digest of these views' SQL (a
-- store built with other SQL is not read) and with each run's runs.ingest_id. A full lint reads
-- them there, deriving again only the runs new, reloaded, removed or without ingest_id since
-- (groundwork.checks.rules.stored).
-- Rule files read only these lint_* relations (GW3/GW4 also look children up in `runs`) and
-- join them on run_key.

CREATE OR REPLACE VIEW lint_runs AS
SELECT invocation_id,
       row_number() OVER (ORDER BY coalesce(grounding_mode, 'None'), invocation_id) AS run_key,
       coalesce(grounding_mode, 'None')                              AS mode,
       coalesce(grounding_mode, 'None') IN ('retrieval', 'input_only', 'none', 'delegation') AS mode_valid,
       CASE WHEN grounding_mode_truthy THEN grounding_mode END        AS mode_label,
       coalesce(grounding_mode_json, 'null')                          AS declared_json,
       coalesce(succeeded, false)                                     AS succeeded,
       payload_type,
       coalesce(payload_has_schema_class, false)                      AS payload_has_schema_class,
       payload_schema_class_json,
       coalesce(payload_has_grounded_on, false)                       AS payload_has_grounded_on,
       coalesce(evidence_count, 0)                                    AS evidence_count,
       'input:' || coalesce(envelope_invocation_id, 'None')           AS input_sid
FROM runs r
WHERE lintable
   OR (EXISTS (SELECT 1 FROM ingest_issues i
               WHERE i.invocation_id = r.invocation_id AND i.kind = 'cycle' AND i.effect LIKE '%unlintable%')
       AND NOT EXISTS (SELECT 1 FROM ingest_issues i
                       WHERE i.invocation_id = r.invocation_id AND i.kind <> 'cycle' AND i.effect LIKE '%unlintable%'));
COMMENT ON VIEW lint_runs IS 'Runs whose files the rules can read: lintable runs, plus runs ingest marked unlintable only for a span-id cycle (so GW1 can name it; lint_judged leaves them out). Envelope values of spec 6.1/6.2 the rules need.';

CREATE OR REPLACE VIEW lint_spans AS
SELECT s.invocation_id, lint_runs.run_key, s.ord, s.line_no, s.name, s.name_json, s.span_id, s.trace_id, s.parent_id,
       s.start_time, s.end_time,
       s.start_workbench_ns AS start_key, s.end_workbench_ns AS end_key,
       coalesce(s.dd_source_id, 'None')    AS source_id,
       coalesce(s.dd_content_hash, 'None') AS content_hash,
       s.dd_grounding_mode, s.dd_grounding_mode_json, s.dd_grounding_mode_is_string,
       s.dd_input_hash, s.dd_outcome
FROM spans s JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_spans IS 'Span records of lintable runs in file order; source_id/content_hash are str() of the attributes, the string None when absent (spec 6.1).';

CREATE OR REPLACE VIEW lint_root AS
SELECT s.invocation_id,
       one.run_key,
       s.ord                          AS root_ord,
       s.span_id                      AS root_span_id,
       s.trace_id                     AS root_trace_id,
       s.dd_grounding_mode            AS root_mode,
       s.dd_grounding_mode_json       AS root_mode_json,
       coalesce(s.dd_grounding_mode_is_string, false) AS root_mode_is_string,
       coalesce(s.dd_input_hash, 'None') AS input_hash
FROM spans s  -- only runs of lint_spans pass the join with one, so these are lint_spans rows
JOIN (SELECT invocation_id, run_key FROM lint_spans WHERE name = 'invoke_agent'
      GROUP BY invocation_id, run_key HAVING count(*) = 1) one USING (invocation_id)
WHERE s.name = 'invoke_agent';
COMMENT ON VIEW lint_root IS 'The single invoke_agent span of runs that have exactly one (spec 6.2 step 1).';

CREATE OR REPLACE VIEW lint_tree AS
WITH RECURSIVE
-- The walk of spec 6.1 without recursing where no run needs it: the children of the root are one
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

COMMENT ON VIEW lint_tree IS 'Descendants of the root (spec 6.1), once per path: a span reached through two copies of a duplicated parent id appears twice, as the workbench counts it. Upstream output order is (parent_key, ord): parent_key encodes the order in which the workbench''s stack pops the parent (negated sibling ords along the path, fixed width, compared as strings). A row with cycle = true re-enters its own path (errata C4); the walk stops there.';

CREATE OR REPLACE VIEW lint_cycles AS
SELECT s.invocation_id, t.run_key, t.ord, s.line_no, s.name_json, s.span_id
FROM (SELECT run_key, min(ord) AS ord FROM lint_tree WHERE cycle GROUP BY run_key) t
JOIN lint_spans s ON s.run_key = t.run_key AND s.ord = t.ord;
COMMENT ON VIEW lint_cycles IS 'Runs whose span tree has a span-id cycle reachable from the root: the workbench linter never returns (errata C4). ord/span_id name the first span record that closes a cycle.';

CREATE OR REPLACE VIEW lint_judged AS
SELECT r.*, t.root_ord, t.root_span_id, t.root_trace_id, t.root_mode, t.root_mode_json,
       t.root_mode_is_string, t.input_hash
FROM lint_runs r JOIN lint_root t USING (run_key)
WHERE NOT EXISTS (SELECT 1 FROM lint_cycles c WHERE c.run_key = r.run_key);
COMMENT ON VIEW lint_judged IS 'Runs that reach spec 6.2 step 2: lintable, exactly one root, no reachable cycle. (input_sid, input_hash) is the input pair.';

CREATE OR REPLACE VIEW lint_counts AS
SELECT j.invocation_id, j.run_key,
       count(t.ord) FILTER (WHERE t.name = 'retrieval') AS retrieval_count,
       count(t.ord) FILTER (WHERE t.name = 'chat')      AS chat_count,
       min(t.end_time) FILTER (WHERE t.name = 'retrieval') AS first_retrieval_end,
       min(t.end_key) FILTER (WHERE t.name = 'retrieval')  AS first_retrieval_end_key
FROM lint_judged j LEFT JOIN lint_tree t USING (run_key)
GROUP BY j.invocation_id, j.run_key;
COMMENT ON VIEW lint_counts IS 'retrieval_count and chat_count over the descendants, duplicates counted (spec 6.1, 6.7), and the earliest end of a retrieval (G1).';

CREATE OR REPLACE VIEW lint_retrieved AS
SELECT DISTINCT invocation_id, run_key, source_id, content_hash
FROM lint_tree WHERE name = 'retrieval';
COMMENT ON VIEW lint_retrieved IS 'The set `retrieved` of spec 6.1: (str(dd.source_id), str(dd.content_hash)) over retrieval descendants.';

CREATE OR REPLACE VIEW lint_refs AS
SELECT p.invocation_id, lint_runs.run_key, p.ord, p.kind, p.source_id, p.content_hash, p.value_json
FROM payload_refs p JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_refs IS 'Everything the grounded_on walk found (spec 6.5), in discovery order: kind ref, malformed or not_list.';

CREATE OR REPLACE VIEW lint_grounded AS
SELECT invocation_id, run_key, ord, source_id, content_hash
FROM lint_refs WHERE kind = 'ref';
COMMENT ON VIEW lint_grounded IS 'The list `grounded` of spec 6.1: well-formed (source_id, content_hash) references in discovery order.';

CREATE OR REPLACE VIEW lint_evidence AS
SELECT e.invocation_id, lint_runs.run_key, e.ord, e.source_id, e.source_id_json, e.content_hash,
       e.canonicalisation_json, e.content_type, e.computed_hash, e.canonical_error
FROM evidence e JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_evidence IS 'Evidence elements of lintable runs in order; (source_id, content_hash) are the evidence pairs of spec 6.1.';

CREATE OR REPLACE VIEW lint_delegations AS
SELECT d.invocation_id, lint_runs.run_key, d.ord, d.delegated_invocation_id, d.content_hash
FROM delegations d JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_delegations IS 'Object entries of envelope.delegations of lintable runs.';

CREATE OR REPLACE VIEW lint_citable AS
SELECT invocation_id, run_key, input_sid AS source_id, input_hash AS content_hash
FROM lint_judged WHERE mode = 'delegation'
UNION ALL
SELECT d.invocation_id, d.run_key, 'invocation:' || coalesce(d.delegated_invocation_id, 'None'), coalesce(d.content_hash, 'None')
FROM lint_delegations d JOIN lint_judged j USING (run_key)
WHERE j.mode = 'delegation';
COMMENT ON VIEW lint_citable IS 'The set `citable` of spec 6.1 for delegation-mode runs: the input pair and one pair per recorded delegation (a pair may repeat).';
-- Columns of the derived relations above.
COMMENT ON COLUMN lint_runs.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_runs.run_key IS 'Integer key of the run, unique within one derivation (its row number in (mode, invocation_id) order, so the runs of one mode have neighbouring keys: lint_store keeps its tables in run_key order, and a rule reading one mode''s rows skips the row groups of the others; in that copy runs derived again later get keys above the kept ones). Rules join on it: cheaper than invocation_id.';
COMMENT ON COLUMN lint_runs.mode IS 'str() of envelope.grounding_mode (the string None when absent or null).';
COMMENT ON COLUMN lint_runs.mode_valid IS 'mode is one of retrieval, input_only, none, delegation (spec 6.2 step 3).';
COMMENT ON COLUMN lint_runs.mode_label IS 'Report mode: mode when the declared value is truthy, else NULL (printed unknown mode).';
COMMENT ON COLUMN lint_runs.declared_json IS 'Raw JSON of envelope.grounding_mode (null when absent), for repr.';
COMMENT ON COLUMN lint_runs.succeeded IS 'outcome is an object whose status is the string succeeded (spec 6.1).';
COMMENT ON COLUMN lint_runs.payload_type IS 'JSON type of the payload; NULL when absent or null.';
COMMENT ON COLUMN lint_runs.payload_has_schema_class IS 'Payload is an object with a schema_class key.';
COMMENT ON COLUMN lint_runs.payload_schema_class_json IS 'Raw JSON of payload.schema_class (NULL when absent), for repr.';
COMMENT ON COLUMN lint_runs.payload_has_grounded_on IS 'Payload is an object with a root grounded_on key.';
COMMENT ON COLUMN lint_runs.evidence_count IS 'Number of evidence elements (0 for absent/null/falsy evidence).';
COMMENT ON COLUMN lint_runs.input_sid IS 'Source id of the input pair: input:<str(envelope.invocation_id)>.';
COMMENT ON COLUMN lint_spans.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_spans.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_spans.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_spans.line_no IS '1-based line of spans.jsonl.';
COMMENT ON COLUMN lint_spans.name IS 'str() of the span name.';
COMMENT ON COLUMN lint_spans.name_json IS 'Raw JSON of the span name, for repr.';
COMMENT ON COLUMN lint_spans.span_id IS 'Span id without 0x.';
COMMENT ON COLUMN lint_spans.trace_id IS 'Trace id without 0x.';
COMMENT ON COLUMN lint_spans.parent_id IS 'Parent span id without 0x; NULL when falsy.';
COMMENT ON COLUMN lint_spans.start_time IS 'Span start (UTC, microseconds).';
COMMENT ON COLUMN lint_spans.end_time IS 'Span end (UTC, microseconds).';
COMMENT ON COLUMN lint_spans.start_key IS 'spans.start_workbench_ns: the workbench''s float-nanosecond start (G1 compares these).';
COMMENT ON COLUMN lint_spans.end_key IS 'spans.end_workbench_ns: the workbench''s float-nanosecond end.';
COMMENT ON COLUMN lint_spans.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_spans.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_spans.dd_grounding_mode IS 'str() of attribute dd.grounding_mode; NULL when the key is absent.';
COMMENT ON COLUMN lint_spans.dd_grounding_mode_json IS 'Raw JSON of attribute dd.grounding_mode (NULL when absent).';
COMMENT ON COLUMN lint_spans.dd_grounding_mode_is_string IS 'Attribute dd.grounding_mode is a JSON string.';
COMMENT ON COLUMN lint_spans.dd_input_hash IS 'str() of attribute dd.input_hash; NULL when the key is absent.';
COMMENT ON COLUMN lint_spans.dd_outcome IS 'str() of attribute dd.outcome; NULL when the key is absent.';
COMMENT ON COLUMN lint_root.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_root.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_root.root_ord IS 'ord of the single invoke_agent span.';
COMMENT ON COLUMN lint_root.root_span_id IS 'span_id of the root.';
COMMENT ON COLUMN lint_root.root_trace_id IS 'trace_id of the root: the invocation''s trace.';
COMMENT ON COLUMN lint_root.root_mode IS 'str() of the root''s dd.grounding_mode (NULL when absent).';
COMMENT ON COLUMN lint_root.root_mode_json IS 'Raw JSON of the root''s dd.grounding_mode (NULL when absent), for repr.';
COMMENT ON COLUMN lint_root.root_mode_is_string IS 'The root''s dd.grounding_mode is a JSON string.';
COMMENT ON COLUMN lint_root.input_hash IS 'str() of the root''s dd.input_hash (the string None when absent): the input pair''s hash.';
COMMENT ON COLUMN lint_tree.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_tree.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_tree.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_tree.depth IS 'Distance from the root (1 = child of the root).';
COMMENT ON COLUMN lint_tree.parent_key IS 'Pop-order key of the parent in the workbench''s stack traversal; output order is (parent_key, ord).';
COMMENT ON COLUMN lint_tree.cycle IS 'The span re-enters its own path: a span-id cycle (errata C4).';
COMMENT ON COLUMN lint_tree.name IS 'str() of the span name.';
COMMENT ON COLUMN lint_tree.span_id IS 'Span id without 0x.';
COMMENT ON COLUMN lint_tree.start_time IS 'Span start (UTC, microseconds).';
COMMENT ON COLUMN lint_tree.end_time IS 'Span end (UTC, microseconds).';
COMMENT ON COLUMN lint_tree.start_key IS 'The workbench''s time key of the start (spans.start_workbench_ns): G1 compares these, exact also where microseconds merge in its float nanoseconds (after ~2242).';
COMMENT ON COLUMN lint_tree.end_key IS 'The workbench''s time key of the end (spans.end_workbench_ns).';
COMMENT ON COLUMN lint_tree.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_tree.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_cycles.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_cycles.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_cycles.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_cycles.line_no IS '1-based line of spans.jsonl.';
COMMENT ON COLUMN lint_cycles.name_json IS 'Raw JSON of the span name, for repr.';
COMMENT ON COLUMN lint_cycles.span_id IS 'Span id without 0x.';
COMMENT ON COLUMN lint_judged.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_judged.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_judged.mode IS 'str() of envelope.grounding_mode (the string None when absent or null).';
COMMENT ON COLUMN lint_judged.mode_valid IS 'mode is one of retrieval, input_only, none, delegation (spec 6.2 step 3).';
COMMENT ON COLUMN lint_judged.mode_label IS 'Report mode: mode when the declared value is truthy, else NULL (printed unknown mode).';
COMMENT ON COLUMN lint_judged.declared_json IS 'Raw JSON of envelope.grounding_mode (null when absent), for repr.';
COMMENT ON COLUMN lint_judged.succeeded IS 'outcome is an object whose status is the string succeeded (spec 6.1).';
COMMENT ON COLUMN lint_judged.payload_type IS 'JSON type of the payload; NULL when absent or null.';
COMMENT ON COLUMN lint_judged.payload_has_schema_class IS 'Payload is an object with a schema_class key.';
COMMENT ON COLUMN lint_judged.payload_schema_class_json IS 'Raw JSON of payload.schema_class (NULL when absent), for repr.';
COMMENT ON COLUMN lint_judged.payload_has_grounded_on IS 'Payload is an object with a root grounded_on key.';
COMMENT ON COLUMN lint_judged.evidence_count IS 'Number of evidence elements (0 for absent/null/falsy evidence).';
COMMENT ON COLUMN lint_judged.input_sid IS 'Source id of the input pair: input:<str(envelope.invocation_id)>.';
COMMENT ON COLUMN lint_judged.root_ord IS 'ord of the single invoke_agent span.';
COMMENT ON COLUMN lint_judged.root_span_id IS 'span_id of the root.';
COMMENT ON COLUMN lint_judged.root_trace_id IS 'trace_id of the root: the invocation''s trace.';
COMMENT ON COLUMN lint_judged.root_mode IS 'str() of the root''s dd.grounding_mode (NULL when absent).';
COMMENT ON COLUMN lint_judged.root_mode_json IS 'Raw JSON of the root''s dd.grounding_mode (NULL when absent), for repr.';
COMMENT ON COLUMN lint_judged.root_mode_is_string IS 'The root''s dd.grounding_mode is a JSON string.';
COMMENT ON COLUMN lint_judged.input_hash IS 'str() of the root''s dd.input_hash (the string None when absent): the input pair''s hash.';
COMMENT ON COLUMN lint_counts.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_counts.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_counts.retrieval_count IS 'Retrieval descendants, duplicates counted.';
COMMENT ON COLUMN lint_counts.chat_count IS 'Chat descendants, duplicates counted.';
COMMENT ON COLUMN lint_counts.first_retrieval_end IS 'Earliest end_time over retrieval descendants.';
COMMENT ON COLUMN lint_counts.first_retrieval_end_key IS 'Earliest end time key (workbench float nanoseconds) over retrieval descendants: what G1 compares chat starts with.';
COMMENT ON COLUMN lint_retrieved.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_retrieved.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_retrieved.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_retrieved.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_refs.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_refs.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_refs.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_refs.kind IS 'ref, malformed or not_list.';
COMMENT ON COLUMN lint_refs.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_refs.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_refs.value_json IS 'Raw JSON of the element or value, for repr.';
COMMENT ON COLUMN lint_grounded.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_grounded.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_grounded.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_grounded.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_grounded.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_evidence.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_evidence.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_evidence.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_evidence.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_evidence.source_id_json IS 'Raw JSON of source_id (null when absent), for repr.';
COMMENT ON COLUMN lint_evidence.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_evidence.canonicalisation_json IS 'Raw JSON of canonicalisation (null when absent), for repr.';
COMMENT ON COLUMN lint_evidence.content_type IS 'JSON type of content; NULL when absent or null (E1 skips those).';
COMMENT ON COLUMN lint_evidence.computed_hash IS 'Hash of content under its canonicalisation; NULL when not an object or hashing failed.';
COMMENT ON COLUMN lint_evidence.canonical_error IS 'Hashing error text (E1).';
COMMENT ON COLUMN lint_delegations.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_delegations.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_delegations.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_delegations.delegated_invocation_id IS 'str() of the child invocation id.';
COMMENT ON COLUMN lint_delegations.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_citable.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_citable.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_citable.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_citable.content_hash IS 'str() of the content hash (the string None when absent).';

-- Lint history additions (helper C). A lint restricted to some rule codes (--rules) is recorded
-- too, but only passes that applied every rule feed latest_lint / lint_diff / recorded_drift.
ALTER TABLE lints ADD COLUMN IF NOT EXISTS all_rules BOOLEAN;
COMMENT ON COLUMN lints.all_rules IS 'lint passes: true when every grounding rule was applied (no --rules selection); NULL for verify passes.';
ALTER TABLE lint_verdicts ADD COLUMN IF NOT EXISTS ingest_id INTEGER;
COMMENT ON COLUMN lint_verdicts.ingest_id IS 'runs.ingest_id of the run when it was judged: a later lint with the same rule set reuses the verdict while the run is not reloaded.';
ALTER TABLE lint_verdicts ADD COLUMN IF NOT EXISTS reused_from INTEGER;
COMMENT ON COLUMN lint_verdicts.reused_from IS 'The lint pass that computed this verdict when it was reused unchanged (run not reloaded, same rules, templates and tool version); NULL when computed by this pass.';
ALTER TABLE lint_verdicts ADD COLUMN IF NOT EXISTS context_key VARCHAR;
COMMENT ON COLUMN lint_verdicts.context_key IS 'What the run''s GW3/GW4 findings depended on when it was judged (lint_context.context_key); NULL for a run without delegations.';

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
COMMENT ON VIEW lint_diff IS 'What changed for each run between its two latest full lint passes: one row per violation (or groundwork finding) that is new, resolved or still failing. Identical messages are matched by occurrence. A run linted once has only new rows.';
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

CREATE OR REPLACE VIEW recorded_drift AS
WITH today AS (
    SELECT l.*, r.recorded_grounding, coalesce(r.withheld, false) AS withheld
    FROM latest_lint l
    JOIN runs r USING (invocation_id)
    WHERE r.recorded_grounding IS NOT NULL
      AND (l.summary IS NULL OR l.summary || chr(10) <> r.recorded_grounding)
),
e1 AS (
    SELECT m.invocation_id, count(*) AS e1_count
    FROM lint_violations m
    JOIN today t ON t.invocation_id = m.invocation_id AND t.lint_id = m.lint_id
    WHERE m.code = 'E1'
    GROUP BY m.invocation_id
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
FROM today t
LEFT JOIN e1 USING (invocation_id);
COMMENT ON VIEW recorded_drift IS 'Runs whose recorded grounding.txt differs from today''s verdict (latest_lint), classified: withheld (the conductor stored an envelope without the payload and evidence it judged, spec 6.9), rules_changed (the text matches an older workbench rule set: no E1 lines where E1 fires today, or delegation rejected as an invalid mode, spec 9.1), recorded_pass_fails_today, other.';
COMMENT ON COLUMN recorded_drift.invocation_id IS 'The run.';
COMMENT ON COLUMN recorded_drift.lint_id IS 'The lint pass today''s verdict comes from.';
COMMENT ON COLUMN recorded_drift.status IS 'Today''s status: passed, failed or unlintable.';
COMMENT ON COLUMN recorded_drift.recorded_grounding IS 'grounding.txt as the workbench wrote it.';
COMMENT ON COLUMN recorded_drift.today_grounding IS 'grounding.txt as the rules give it today (NULL when unlintable).';
COMMENT ON COLUMN recorded_drift.drift IS 'withheld, rules_changed, recorded_pass_fails_today or other.';

-- ------------------------------------------------------------------------------------------
-- Investigation views (helper G): documented starting points for `groundwork sql` and the
-- saved queries in sql/queries/. Portable SQL only (joins, aggregates, window functions,
-- recursive CTEs). "Today's verdict" = latest_lint (above) and latest_verify (below).
-- ------------------------------------------------------------------------------------------

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
    -- Cycle guard (spec 10 C4): never re-enter a span id already on the path.
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
COMMENT ON COLUMN citations.ord IS '0-based discovery order in the payload (spec 6.5).';
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
