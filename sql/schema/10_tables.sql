-- groundwork warehouse schema, part 1: the tables. The schema is the files of sql/schema/, applied
-- in file name order by groundwork.core.warehouse.apply_schema() (every statement is idempotent):
-- 00_migrations.sql, 10_tables.sql (this file), 20_source_check_items.sql, 30_derived/ (the
-- derived relations the rule files read), 40_history.sql (views over the check history),
-- 50_investigation.sql. They are the only DDL of the project; docs/schema.md is generated from
-- their comments.
-- Conventions:
--   * One row of `runs` per run folder, keyed by invocation_id (the folder name).
--   * str(v) below means Python's str() of the parsed JSON value (docs/rules.md#str): the rules compare
--     these strings, exactly as the workbench does. `*_json` columns keep the raw JSON text of a
--     value (Python json.dumps form) so that templates can render its Python repr (docs/rules.md#repr).
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
INSERT OR REPLACE INTO schema_info VALUES ('schema_version', '4');
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
    tool_version    VARCHAR,
    scan            VARCHAR,
    dir_mtime_ns    BIGINT,
    runs_changed    INTEGER
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
COMMENT ON COLUMN ingests.scan IS 'full: every run folder listed and its files compared by size, mtime and content hash (`--full-scan`, a first ingest, every N nightlies); quick: only what is new since the last finished ingest (new or vanished run folder names when runs/ changed, new index lines, runs written shortly before the last ingest); NULL: an ingest of given runs only, or by an older groundwork.';
COMMENT ON COLUMN ingests.dir_mtime_ns IS 'Modification time of runs/ (ns) as listed by this ingest, the next quick ingest''s watermark: when unchanged, no run folder was added, removed or renamed since. NULL when not trusted (runs/ modified too close to its listing) or not listed.';
COMMENT ON COLUMN ingests.runs_changed IS 'Runs whose rows this ingest changed: loaded (new or reloaded) or marked missing or back. 0: every run is as before it, so a check pass recorded before it still holds (groundwork.checks.current). NULL: not counted (the ingest did not finish, or an older groundwork ran it).';

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
COMMENT ON COLUMN ingest_issues.kind IS 'Machine-readable issue kind: missing-file, empty-file, truncated, malformed-json, non-utf8, bom, missing-key, wrong-type, bad-time, naive-time, name-mismatch, duplicate-invocation-id, cycle, unreadable, symlink-outside, line-too-long, lone-surrogate, unexpected-entry, bad-name, internal-error, too-large, unstorable (docs/rules.md#too-large-runs).';
COMMENT ON COLUMN ingest_issues.message IS 'Human-readable explanation.';
COMMENT ON COLUMN ingest_issues.effect IS 'What the issue did to the run: rejected (folder not loaded, no runs row), unlintable (the workbench linter would crash or hang), unverifiable (its source check would crash), unlintable+unverifiable, unlintable-if-read (an envelope value the linter crashes on only where it reads it: past its early stops, delegations only in delegation mode; lint decides, docs/rules.md#early-stops), unlintable-if-read+unverifiable, none (recorded; the run is checked normally).';

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
    sha256    VARCHAR,
    lines     BIGINT,
    tail_sha256 VARCHAR
);
COMMENT ON TABLE archive_files IS 'Fingerprint of the archive-level files (invocations.jsonl, schemas/*.json), used to skip re-reading them when unchanged.';
COMMENT ON COLUMN archive_files.path IS 'Path relative to the archive root.';
COMMENT ON COLUMN archive_files.size IS 'File size in bytes.';
COMMENT ON COLUMN archive_files.mtime_ns IS 'Modification time in nanoseconds since the epoch.';
COMMENT ON COLUMN archive_files.sha256 IS 'SHA-256 of the file bytes (schemas/*.json); NULL for invocations.jsonl, which only grows and is recognised by its tail (tail_sha256) instead of being hashed whole again.';
COMMENT ON COLUMN archive_files.lines IS 'invocations.jsonl: newlines in its first `size` bytes (the lines read; the next ingest numbers the appended lines from here). NULL for schemas/*.json.';
COMMENT ON COLUMN archive_files.tail_sha256 IS 'invocations.jsonl: SHA-256 of its last 4096 bytes up to `size` (all of them when shorter): when the file has grown and still holds these bytes there, only the lines after `size` are read; otherwise it was rewritten and is read whole. NULL for schemas/*.json.';

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
    parser_version             INTEGER,
    outcome_problem            VARCHAR,
    evidence_problem           VARCHAR,
    delegations_problem        VARCHAR
);
COMMENT ON TABLE runs IS 'One row per run folder ever ingested (never deleted; a folder gone from disk is marked missing).';
COMMENT ON COLUMN runs.invocation_id IS 'Run folder name (normally the UUIDv7 invocation id).';
COMMENT ON COLUMN runs.run_path IS 'Path of the run folder relative to the archive root.';
COMMENT ON COLUMN runs.ingest_id IS 'The ingest that last (re)loaded this run.';
COMMENT ON COLUMN runs.missing IS 'True when the folder was not on disk at the last ingest of its archive.';
COMMENT ON COLUMN runs.lintable IS 'False when the workbench linter itself could not lint this run whatever step it stops at (it would crash or hang); the reason is in unlintable_reason. Envelope values it crashes on only where it reads them are in outcome_problem, evidence_problem and delegations_problem: lint decides whether the run reaches them (docs/rules.md#early-stops).';
COMMENT ON COLUMN runs.unlintable_reason IS 'Why the run cannot be linted: the first crash, as <path>[ line N]: <message>[ (and N more)], e.g. <id>/spans.jsonl line 2: invalid JSON (...). The matching ingest_issues rows have effect unlintable or unlintable+unverifiable.';
COMMENT ON COLUMN runs.verifiable IS 'False when the workbench source check would crash on this envelope (e.g. grounding_mode is a list or object, docs/rules.md#unverifiable-runs).';
COMMENT ON COLUMN runs.unverifiable_reason IS 'Why the source check cannot run on this envelope (same form as unlintable_reason).';
COMMENT ON COLUMN runs.envelope_invocation_id IS 'str() of envelope.invocation_id (None when absent); used for the input pair input:<id>.';
COMMENT ON COLUMN runs.agent_id IS 'envelope.agent_id (str()), NULL when absent.';
COMMENT ON COLUMN runs.agent_version IS 'envelope.agent_version (str()), NULL when absent.';
COMMENT ON COLUMN runs.completed_at IS 'envelope.completed_at as UTC timestamp, NULL when absent, unparsable, or in UTC outside the years 1 to 9999.';
COMMENT ON COLUMN runs.grounding_mode IS 'str() of envelope.grounding_mode; NULL when absent or null.';
COMMENT ON COLUMN runs.grounding_mode_json IS 'Raw JSON of envelope.grounding_mode (null when absent), for repr in G0 messages.';
COMMENT ON COLUMN runs.grounding_mode_truthy IS 'Python truthiness of envelope.grounding_mode (report mode label is "unknown mode" when false).';
COMMENT ON COLUMN runs.outcome_status IS 'str() of envelope.outcome.status when outcome is an object with status; NULL otherwise.';
COMMENT ON COLUMN runs.succeeded IS 'True when outcome is an object whose status is exactly the string succeeded.';
COMMENT ON COLUMN runs.problem_type IS 'envelope.problem.type, NULL when absent.';
COMMENT ON COLUMN runs.withheld IS 'True when the stored envelope is a conductor-withheld grounding-violation envelope (docs/rules.md#withheld-envelopes).';
COMMENT ON COLUMN runs.payload_type IS 'JSON type of envelope.payload: object, array, string, number, boolean; NULL when absent or null.';
COMMENT ON COLUMN runs.payload_has_schema_class IS 'Payload is an object with a schema_class key.';
COMMENT ON COLUMN runs.payload_schema_class_json IS 'Raw JSON of payload.schema_class (NULL when absent), for repr.';
COMMENT ON COLUMN runs.payload_has_grounded_on IS 'Payload is an object with a root grounded_on key.';
COMMENT ON COLUMN runs.evidence_count IS 'Number of evidence elements (0 for absent/null/falsy evidence).';
COMMENT ON COLUMN runs.delegation_count IS 'Number of object elements of envelope.delegations.';
COMMENT ON COLUMN runs.conversation_id IS 'envelope.conversation_id, NULL when absent.';
COMMENT ON COLUMN runs.parent_invocation_id IS 'envelope.parent_invocation_id (delegated children), NULL when absent.';
COMMENT ON COLUMN runs.telemetry_trace_id IS 'envelope.telemetry.trace_id, NULL when absent.';
COMMENT ON COLUMN runs.envelope_hash IS 'dd-envelope-json-v1 hash of the stored envelope document (docs/rules.md#envelope-hash).';
COMMENT ON COLUMN runs.input_hash IS 'dd-input-json-v1 hash of request.json input (docs/rules.md#input-hash); NULL without a readable request.';
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
COMMENT ON COLUMN runs.outcome_problem IS 'Why the workbench linter crashes where it reads envelope.outcome (a truthy value that is not an object), as <path>: <message>; NULL when it reads it fine. It reads it in every mode, but only past its early stops: lint decides (docs/rules.md#early-stops). The matching ingest_issues row has effect unlintable-if-read.';
COMMENT ON COLUMN runs.evidence_problem IS 'Why the workbench linter crashes where it reads envelope.evidence (a truthy non-list, or non-object elements), as <path>: <message>[ (and N more)]; NULL when it reads it fine. Read in every mode past the early stops: lint decides (docs/rules.md#early-stops). The source check reads it always: such a run is unverifiable (docs/rules.md#unverifiable-runs).';
COMMENT ON COLUMN runs.delegations_problem IS 'Why the workbench linter crashes where it reads envelope.delegations (a truthy value that cannot be iterated: a number, true), as <path>: <message>; NULL when it reads it fine. Read only in delegation mode, past the early stops: lint decides (docs/rules.md#early-stops).';

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
COMMENT ON TABLE payload_refs IS 'Every grounded_on value found by the recursive payload walk of docs/rules.md#grounded-references, in discovery order: well-formed references, malformed elements and non-list values.';
COMMENT ON COLUMN payload_refs.invocation_id IS 'Run folder.';
COMMENT ON COLUMN payload_refs.ord IS '0-based discovery order over the whole payload (docs/rules.md#grounded-references).';
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
COMMENT ON TABLE evidence IS 'One row per envelope evidence element, in order, with the hash of its content recomputed under its canonicalisation (docs/rules.md#canonical-json).';
COMMENT ON COLUMN evidence.invocation_id IS 'Run folder.';
COMMENT ON COLUMN evidence.ord IS '0-based position in envelope.evidence.';
COMMENT ON COLUMN evidence.source_id IS 'str() of source_id; the string None when absent or null.';
COMMENT ON COLUMN evidence.source_id_json IS 'Raw JSON of source_id (null when absent), for repr.';
COMMENT ON COLUMN evidence.content_hash IS 'str() of content_hash; None when absent.';
COMMENT ON COLUMN evidence.canonicalisation IS 'str() of canonicalisation; None when absent.';
COMMENT ON COLUMN evidence.canonicalisation_json IS 'Raw JSON of canonicalisation (null when absent), for repr.';
COMMENT ON COLUMN evidence.snapshot_ref IS 'str() of snapshot_ref; the string None when absent (the source check looks that up, docs/rules.md#source-check).';
COMMENT ON COLUMN evidence.source_uri IS 'source_uri as stored (str()), NULL when absent.';
COMMENT ON COLUMN evidence.retrieved_at IS 'retrieved_at as stored, NULL when absent.';
COMMENT ON COLUMN evidence.hash_algorithm IS 'hash_algorithm as stored (never checked), NULL when absent.';
COMMENT ON COLUMN evidence.content_type IS 'JSON type of content: object, array, string, number, boolean; NULL when absent or null (E1 skips those).';
COMMENT ON COLUMN evidence.content_json IS 'The content document as stored.';
COMMENT ON COLUMN evidence.computed_hash IS 'SHA-256 of content under its canonicalisation (Python-compatible canonical JSON); NULL when content is not an object or hashing failed.';
COMMENT ON COLUMN evidence.item_type IS 'JSON type of the evidence element: object normally; anything else (null, string, ...) makes the run unverifiable and sets runs.evidence_problem (the linter crashes on it past its early stops), and then every other column but item_json is NULL.';
COMMENT ON COLUMN evidence.item_json IS 'Raw JSON of the whole evidence element (Python json.dumps form).';
COMMENT ON COLUMN evidence.snapshot_ref_json IS 'Raw JSON of snapshot_ref (null when absent), for repr in S1/S2 messages (docs/rules.md#source-check: an absent ref prints None).';
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
COMMENT ON TABLE delegations IS 'One row per object element of envelope.delegations (docs/rules.md#delegations); non-object elements are ignored as by the workbench (docs/rules.md#citable-set).';
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
COMMENT ON TABLE class_schemas IS 'runs/schemas/<digest>.json: class schemas kept by the store (docs/rules.md#run-folder).';
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
    runs_failed    INTEGER,
    all_rules      BOOLEAN,
    config_id      INTEGER,
    all_runs       BOOLEAN,
    ingest_id      INTEGER
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
COMMENT ON COLUMN lints.all_rules IS 'lint passes: true when every grounding rule was applied (no --rules selection); NULL for verify passes.';
COMMENT ON COLUMN lints.config_id IS 'verify passes: the sources configuration used (source_configs); NULL for lint.';
COMMENT ON COLUMN lints.all_runs IS 'true when the pass gave every run of the warehouse a verdict, false when only some runs (--run, the watch); NULL for passes recorded before schema_version 3.';
COMMENT ON COLUMN lints.ingest_id IS 'The latest ingest (ingests.ingest_id) when the pass read the runs: a pass of every run stays current while every ingest since changed no run (ingests.runs_changed 0), and a nightly then points at it instead of recording a new pass. NULL for passes recorded before schema_version 4.';

CREATE TABLE IF NOT EXISTS lint_verdicts (
    lint_id           INTEGER,
    invocation_id     VARCHAR,
    status            VARCHAR,
    passed            BOOLEAN,
    mode              VARCHAR,
    retrieval_count   INTEGER,
    chat_count        INTEGER,
    summary           VARCHAR,
    reason            VARCHAR,
    ingest_id         INTEGER,
    reused_from       INTEGER,
    context_key       VARCHAR
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
COMMENT ON COLUMN lint_verdicts.ingest_id IS 'runs.ingest_id of the run when it was judged: a later lint with the same rule set reuses the verdict while the run is not reloaded.';
COMMENT ON COLUMN lint_verdicts.reused_from IS 'The lint pass that computed this verdict when it was reused unchanged (run not reloaded, same rules, templates and tool version); NULL when computed by this pass.';
COMMENT ON COLUMN lint_verdicts.context_key IS 'What the run''s GW3/GW4 findings depended on when it was judged (lint_context.context_key); NULL for a run without delegations.';

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
    reason           VARCHAR,
    ingest_id        INTEGER
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
COMMENT ON COLUMN verify_verdicts.ingest_id IS 'runs.ingest_id of the run when it was judged (a later verify pass reuses the verdict while it is unchanged).';

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
-- Source copies (helper D: groundwork/checks/sources.py, docs/rules.md#sources-configuration, docs/rules.md#source-copies)
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
COMMENT ON TABLE source_refs IS 'Which pinned copy serves which evidence snapshot_ref under a configuration: one row per listed snapshot_ref (docs/rules.md#sources-configuration).';
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
COMMENT ON COLUMN source_copies.format IS 'json-array (text starts with [ after leading whitespace) or jsonl (docs/rules.md#source-copies).';
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
COMMENT ON TABLE source_records IS 'Every record of every pinned copy, keyed by (copy_id, record_id), with its hash under each canonicalisation (docs/rules.md#canonicalisations).';
COMMENT ON COLUMN source_records.copy_id IS 'The copy (source_copies).';
COMMENT ON COLUMN source_records.record_id IS 'The record''s id_field value (the source_id evidence cites).';
COMMENT ON COLUMN source_records.ord IS '0-based position of the record in the file (the last one of a duplicated id).';
COMMENT ON COLUMN source_records.hash_identity IS 'SHA-256 of the whole record''s canonical bytes: its hash under dd-json-document-v1, dd-input-json-v1 and dd-envelope-json-v1; NULL when it cannot be encoded.';
COMMENT ON COLUMN source_records.hash_identity_error IS 'Why hash_identity is NULL (exact error text the workbench prints after S2: evidence ...: ).';
COMMENT ON COLUMN source_records.hash_fairsharing IS 'SHA-256 of the record''s json-sorted-utf8-v1 projection (9 FAIRsharing fields, lists as sorted str() items).';
COMMENT ON COLUMN source_records.hash_fairsharing_error IS 'Why hash_fairsharing is NULL.';
COMMENT ON COLUMN source_records.record_json IS 'The record as compact JSON with sorted keys (Python json.dumps form).';

CREATE TABLE IF NOT EXISTS source_files (
    file       VARCHAR PRIMARY KEY,
    size       BIGINT,
    mtime_ns   BIGINT,
    ctime_ns   BIGINT,
    inode      BIGINT,
    device     BIGINT,
    sha256     VARCHAR,
    checked_at TIMESTAMP
);
COMMENT ON TABLE source_files IS 'Each pinned data file as it was when its bytes last matched their pin: a nightly that is not a full scan takes a file whose size, inode, device, mtime and ctime are all the same to hold the same bytes (any write, and any reset of the mtime, changes the ctime) and does not read it again (groundwork.checks.sources).';
COMMENT ON COLUMN source_files.file IS 'Absolute path of the data file.';
COMMENT ON COLUMN source_files.size IS 'Size in bytes.';
COMMENT ON COLUMN source_files.mtime_ns IS 'Modification time (ns).';
COMMENT ON COLUMN source_files.ctime_ns IS 'Status change time (ns).';
COMMENT ON COLUMN source_files.inode IS 'Inode number.';
COMMENT ON COLUMN source_files.device IS 'Device number.';
COMMENT ON COLUMN source_files.sha256 IS 'SHA-256 of the bytes, equal to the pin they were checked against.';
COMMENT ON COLUMN source_files.checked_at IS 'UTC time the bytes were last read and checked.';

-- ------------------------------------------------------------------------------------------
-- Nightly job history (helper E: groundwork/jobs/nightly.py). One row per `groundwork nightly`;
-- "new / resolved / still failing" compare a nightly's lint and verify passes with those of
-- the previous nightly that finished (exit status 0 or 1): the view nightly_changes (40_history.sql).
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
COMMENT ON COLUMN nightlies.new_failing IS 'Runs failing now that did not fail that check in the baseline (new runs included): nightly_changes rows with change new.';
COMMENT ON COLUMN nightlies.resolved IS 'Runs failing in the baseline that pass every check now: nightly_changes rows with change resolved.';
COMMENT ON COLUMN nightlies.still_failing IS 'Runs failing both in the baseline and now (and not new in another check): nightly_changes rows with change still.';
COMMENT ON COLUMN nightlies.exit_status IS '0 nothing new fails, 1 new violations, 2 the job could not be done; NULL while running.';
COMMENT ON COLUMN nightlies.error IS 'One-line reason when exit_status is 2.';

CREATE TABLE IF NOT EXISTS nightly_severities (
    nightly_id  INTEGER,
    code        VARCHAR,
    severity    VARCHAR
);
COMMENT ON TABLE nightly_severities IS 'The severity each groundwork finding code (GW...) had in a nightly (groundwork.toml [severity], else the defaults of docs/rules.md#severities): one row per finding code and nightly. nightly_changes counts a run with a finding of severity error as failing; the rows of a finding stay in lint_violations whatever its severity.';
COMMENT ON COLUMN nightly_severities.nightly_id IS 'The nightly (nightlies.nightly_id).';
COMMENT ON COLUMN nightly_severities.code IS 'Finding code (GW1 ... GW4).';
COMMENT ON COLUMN nightly_severities.severity IS 'error (fails the run: exit status, new / still failing, metrics), warn (listed, fails nothing) or off (left out of the reports and metrics).';
