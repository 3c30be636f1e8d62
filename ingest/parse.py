"""One run folder's bytes -> warehouse rows (pure: no file system, no warehouse).

``parse_run`` takes a ``RunListing`` whose files have been read and returns a ``RowSet`` with
the run's rows in every run table, its issues and its lintable/verifiable verdicts.
"""

from __future__ import annotations

import operator
from hashlib import sha256

from groundwork.core import native as _native_switch

from groundwork.core.canonical import FAIRSHARING_FIELDS, PROJECTED, REGISTERED

from groundwork.ingest import issues as K
from groundwork.ingest.envelope import (DELEGATION_FIELDS, ENVELOPE_COLUMNS, EVIDENCE_FIELDS, PAYLOAD_FIELDS,
                                        WITHHELD_TYPE, delegation_rows, envelope_columns, evidence_rows, payload_rows,
                                        request_columns)
from groundwork.ingest.issues import Issues, reason
from groundwork.core.jsontext import (
    decode_utf8,
    has_lone_surrogate,
    iso_to_us_opt,
    may_hold_surrogate,
    needs_exact_bytes,
    parse,
    vstr,
)
from groundwork.ingest.scan import FileEntry, RunListing
from groundwork.ingest import spans
from groundwork.ingest.spans import check_cycles, long_line_message, native_spans, parse_spans
from groundwork.ingest.tables import COLUMN_NAMES, RowSet

# ingest/_envelope_native.c: envelope.json / request.json bytes -> exactly the rows below, or None
# (declined: the Python path runs); given its constants once, from where they are defined. None
# when not built, GROUNDWORK_NATIVE=off, or it does not accept them.
_envelope_native = _native_switch.load(
    "groundwork.ingest._envelope_native",
    lambda c: c.configure(ENVELOPE_COLUMNS, PAYLOAD_FIELDS, EVIDENCE_FIELDS, DELEGATION_FIELDS,
                          REGISTERED, PROJECTED, FAIRSHARING_FIELDS, WITHHELD_TYPE))

# Bump when parsing changes what is stored: runs loaded by an older parser are reloaded.
PARSER_VERSION = 6  # 3: evidence.snapshot_ref_json; 4: runs.outcome/evidence/delegations_problem;
                    # 5: a span line with context is never OTLP, a mixed file unlintable, completed_at in years 1-9999;
                    # 6: JSON nested past json.loads' depth (996-1024 levels, orjson took it) is unparsable

ENVELOPE = "envelope.json"
SPANS = "spans.jsonl"
REQUEST = "request.json"
GROUNDING = "grounding.txt"
SOURCES = "sources.txt"

_RUN_COLS = COLUMN_NAMES["runs"]
_run_tuple = operator.itemgetter(*_RUN_COLS)
# the columns of file_rows() and issue_rows(), in their tuples' order
FILE_FIELDS = ("invocation_id", "file_name", "size", "mtime_ns", "sha256")
ISSUE_FIELDS = ("ingest_id", "invocation_id", "path", "line", "kind", "message", "effect")
# the column names of the rows parse_run and failed_run give each table
ROW_FIELDS = {"runs": _RUN_COLS, "spans": spans.FIELDS, "payload_refs": PAYLOAD_FIELDS, "evidence": EVIDENCE_FIELDS,
              "delegations": DELEGATION_FIELDS, "run_files": FILE_FIELDS, "ingest_issues": ISSUE_FIELDS}


def _check_surrogates(raw: bytes, value, path: str, issues: Issues) -> None:
    """Record a lone surrogate escape (text columns then show U+FFFD; exact values stay in *_json)."""
    if may_hold_surrogate(raw) and has_lone_surrogate(value):
        issues.add(path, None, K.LONE_SURROGATE,
                   "contains a lone UTF-16 surrogate escape (e.g. \\ud800); text columns show U+FFFD, "
                   "the *_json columns keep the exact value")


def _load_json_file(f: FileEntry | None, path: str, issues: Issues, crash_lint: bool, crash_verify: bool):
    """Parse a whole-document JSON file as the workbench does (read_text + json.loads).

    Returns ``(present, value, fast)``; ``present`` is False when nothing usable could be parsed;
    ``fast`` as for jsontext.parse.
    """
    what = path.rsplit("/", 1)[-1]
    if f is None:
        issues.add(path, None, K.MISSING_FILE, f"{what} is missing", crash_lint, crash_verify)
        return False, None, False
    if f.error is not None:
        issues.add(path, None, f.error[0], f.error[1], crash_lint, crash_verify)
        return False, None, False
    text, problems = decode_utf8(f.data)
    for p in problems:
        issues.add(path, p.line, p.kind, p.message, crash_lint, crash_verify)
    if not text.strip():
        issues.add(path, None, K.EMPTY_FILE, f"{what} is empty" if not f.data else f"{what} holds only whitespace",
                   crash_lint, crash_verify)
        return False, None, False
    try:
        # (a file neither check reads: not refused for a depth the workbench's parser would refuse)
        value, fast = parse(text, needs_exact_bytes(f.data), deep=not (crash_lint or crash_verify))
    except RecursionError:
        issues.add(path, None, K.MALFORMED_JSON, "JSON nested too deeply for Python's json module", crash_lint, crash_verify)
        return False, None, False
    except ValueError as exc:
        pos = getattr(exc, "pos", None)
        if pos is not None and pos >= len(text.rstrip()):
            issues.add(path, getattr(exc, "lineno", None), K.TRUNCATED,
                       f"{what} ends before the JSON document does ({exc})", crash_lint, crash_verify)
        else:
            issues.add(path, getattr(exc, "lineno", None), K.MALFORMED_JSON, f"invalid JSON ({exc})",
                       crash_lint, crash_verify)
        return False, None, False
    _check_surrogates(f.data, value, path, issues)
    return True, value, fast


def _line_at(data: bytes, offset: int) -> int:
    """The line number (as the workbench's str.splitlines counts) of the line starting at byte
    ``offset`` of ``data``."""
    return len(data[:offset].decode("utf-8", "replace").splitlines()) + 1


def _text_file(f: FileEntry | None, path: str, issues: Issues, required: bool) -> str | None:
    """A recorded verdict text (grounding.txt / sources.txt), exactly as stored."""
    if f is None:
        if required:
            issues.add(path, None, K.MISSING_FILE, f"{path.rsplit('/', 1)[-1]} is missing")
        return None
    if f.error is not None:
        issues.add(path, None, f.error[0], f.error[1])
        return None
    _, problems = decode_utf8(f.data)
    for p in problems:
        issues.add(path, p.line, p.kind, p.message)
    return f.data.decode("utf-8", "replace")


def parse_run(listing: RunListing, ingest_id: int | None = None, *, folder_check: bool = True,
              run_path: str | None = None, files_fp: str | None = None) -> tuple[RowSet, Issues]:
    """Rows of every run table for one run folder whose files have been read."""
    inv = listing.name
    rel = (run_path if run_path is not None else inv)
    prefix = rel + "/" if rel else ""
    issues = Issues()
    out = RowSet(ROW_FIELDS)
    run = dict.fromkeys(_RUN_COLS)
    run.update(invocation_id=inv, run_path=rel, ingest_id=ingest_id, missing=False,
               evidence_count=0, delegation_count=0, span_count=0, parser_version=PARSER_VERSION,
               grounding_mode_json="null", grounding_mode_truthy=False, succeeded=False, withheld=False,
               payload_has_schema_class=False, payload_has_grounded_on=False)
    files = listing.files
    for rel_name, kind, message in listing.problems:
        issues.add(prefix + rel_name, None, kind, message)

    # spans.jsonl — read first, as the workbench does
    spath = prefix + SPANS
    f = files.get(SPANS)
    if f is None:
        issues.add(spath, None, K.MISSING_FILE, "spans.jsonl is missing", lint=True)
    elif f.error is not None:
        issues.add(spath, None, f.error[0], f.error[1], lint=True)
    else:
        # The C fast path reads the bytes as they are (printable ASCII only: nothing to decode,
        # no issue but an empty file); None -> decode and parse in Python.
        parsed = native_spans(f.data, inv)
        if parsed is None:
            text, problems = decode_utf8(f.data)
            for p in problems:
                issues.add(spath, p.line, p.kind, p.message, lint=True)
            blank = not text.strip()
        else:
            blank = not parsed[0]
        for offset, nbytes in f.long_lines or ():
            issues.add(spath, _line_at(f.data, offset), K.LINE_TOO_LONG, long_line_message(nbytes), lint=True)
        if blank and not f.long_lines:
            issues.add(spath, None, K.EMPTY_FILE,
                       "spans.jsonl is empty (the workbench lints it as 0 spans)" if not f.data
                       else "spans.jsonl holds only whitespace (the workbench lints it as 0 spans)")
        if parsed is None:
            parsed = parse_spans(text, inv, spath, issues, f.data.endswith((b"\n", b"\r")),
                                 needs_exact_bytes(f.data), may_hold_surrogate(f.data), try_native=False)
        rows, fmt, records = parsed
        check_cycles(records, spath, issues)
        out.rows["spans"] = rows
        run["span_format"] = fmt
        run["span_count"] = len(rows)

    # envelope.json
    epath = prefix + ENVELOPE
    f = files.get(ENVELOPE)
    # The C fast path takes the raw bytes of a clean envelope (no issue to record) or declines.
    got = (_envelope_native.envelope(f.data, inv, folder_check, iso_to_us_opt, sha256)
           if _envelope_native is not None and f is not None and f.error is None else None)
    if got is not None:
        cols, payload, evidence, delegations = got
        run.update(zip(ENVELOPE_COLUMNS, cols))
        present = False
    else:
        present, env, fast = _load_json_file(f, epath, issues, True, True)
    if present:
        run.update(envelope_columns(env, inv, epath, issues, inv if folder_check else None, fast))
        payload, evidence, delegations = payload_rows(env, inv, fast), evidence_rows(env, inv, fast, issues, epath), delegation_rows(env, inv)
    if got is not None or present:
        out.rows["payload_refs"], out.rows["evidence"], out.rows["delegations"] = payload, evidence, delegations

    # request.json — not read by either check; gives the input hash (docs/rules.md#input-hash)
    rpath = prefix + REQUEST
    f = files.get(REQUEST)
    got = (_envelope_native.request(f.data, iso_to_us_opt, sha256)
           if _envelope_native is not None and f is not None and f.error is None else None)
    if got is not None:
        run["request_json"], run["input_hash"], run["issued_at"] = got
        present = False
    else:
        present, req, fast = _load_json_file(f, rpath, issues, False, False)
    if present:
        run.update(request_columns(req, rpath, issues, fast))

    run["recorded_grounding"] = _text_file(files.get(GROUNDING), prefix + GROUNDING, issues, required=True)
    run["recorded_sources"] = _text_file(files.get(SOURCES), prefix + SOURCES, issues, required=False)

    run["lintable"] = not issues.lint_blockers
    run["unlintable_reason"] = reason(issues.lint_blockers)
    # The envelope values the linter reads only past its early stops: lint decides whether the run
    # reaches them (docs/rules.md#early-stops).
    for part in K.READ_PARTS:
        run[f"{part}_problem"] = reason(issues.read_blockers.get(part, []))
    run["verifiable"] = not issues.verify_blockers
    run["unverifiable_reason"] = reason(issues.verify_blockers)
    run["files_fingerprint"] = files_fp or listing.files_fingerprint()
    run["content_fingerprint"] = listing.content_fingerprint()
    out.rows["runs"] = [_run_tuple(run)]
    out.rows["run_files"] = file_rows(listing)
    out.rows["ingest_issues"] = issue_rows(issues, ingest_id, inv)
    return out, issues


def listing_of(name: str, entries) -> RunListing:
    """The RunListing of a run folder whose files are already in memory: ``entries`` are
    (path inside the folder, bytes, size, mtime_ns), e.g. rows of Spark's binaryFile source
    (groundwork/spark). What ``scan.list_and_read`` gives for the same files on disk."""
    listing = RunListing(name)
    for rel, data, size, mtime_ns in sorted(entries, key=operator.itemgetter(0)):
        data = bytes(data)
        listing.files[rel] = FileEntry(rel, len(data), mtime_ns, data, sha256(data).hexdigest(), None, size)
    return listing


def parse_files(name: str, entries, ingest_id: int | None = None) -> RowSet:
    """Rows of every run table for the run folder ``name`` whose files ``entries`` (see
    ``listing_of``) were read elsewhere: ``parse_run``, or ``failed_run`` when the parser
    itself fails (as ``work.process_chunk`` does for folders read from disk)."""
    listing = listing_of(name, entries)
    try:
        return parse_run(listing, ingest_id)[0]
    except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the run
        return failed_run(listing, ingest_id, exc)


def failed_run(listing: RunListing, ingest_id: int | None, exc: BaseException) -> RowSet:
    """Rows for a run the parser itself failed on (a bug): kept, unlintable and unverifiable,
    with the error recorded — never dropped, never a traceback."""
    message = f"groundwork could not parse this run ({type(exc).__name__}: {exc}); please report it"
    out = stand_in_run(listing.name, listing.name, ingest_id, listing.files_fingerprint(),
                       listing.content_fingerprint(), listing.name, K.INTERNAL_ERROR, vstr(message))
    out.rows["run_files"] = file_rows(listing)
    return out


def stand_in_run(inv: str, run_path: str, ingest_id: int | None, files_fp: str | None, content_fp: str | None,
                 path: str, kind: str, message: str) -> RowSet:
    """The rows kept of a run that cannot be loaded as read (its parse failed, or the warehouse
    refused its rows): a runs row, unlintable and unverifiable, and the issue saying why
    (``run_files`` is the caller's: the fingerprints keep an unchanged run from being retried)."""
    issues = Issues()
    issues.add(path, None, kind, message, lint=True, verify=True)
    run = dict.fromkeys(_RUN_COLS)
    run.update(invocation_id=inv, run_path=run_path, ingest_id=ingest_id, missing=False,
               lintable=False, unlintable_reason=reason(issues.lint_blockers), verifiable=False,
               unverifiable_reason=reason(issues.verify_blockers), evidence_count=0, delegation_count=0,
               span_count=0, parser_version=PARSER_VERSION, files_fingerprint=files_fp,
               content_fingerprint=content_fp)
    out = RowSet(ROW_FIELDS)
    out.rows["runs"] = [_run_tuple(run)]
    out.rows["ingest_issues"] = issue_rows(issues, ingest_id, inv)
    return out


def file_rows(listing: RunListing) -> list[tuple]:
    """run_files rows (FILE_FIELDS)."""
    return [(listing.name, rel, f.size, f.mtime_ns, f.sha256) for rel, f in sorted(listing.files.items())]


def issue_row(ingest_id: int | None, inv: str | None, path: str, line: int | None, kind: str, message: str,
              effect: str) -> tuple:
    """One ingest_issues row (ISSUE_FIELDS)."""
    return ingest_id, inv, path, line, kind, message, effect


def issue_rows(issues: Issues, ingest_id: int | None, inv: str | None) -> list[tuple]:
    """ingest_issues rows (ISSUE_FIELDS)."""
    return [(ingest_id, inv, path, line, kind, message, effect) for path, line, kind, message, effect in issues.items]
