"""spans.jsonl -> span rows, for both line forms, normalised into one row shape.

* ``sdk``  – the OpenTelemetry Python SDK's ``to_json`` (what the workbench writes, docs/rules.md#spans);
* ``otlp`` – OTLP/JSON as the Collector file exporter writes it: one ``TracesData`` per line
  (``resourceSpans`` -> ``scopeSpans`` -> ``spans``); a bare OTLP span object per line is
  accepted too.

Reading mirrors the workbench's reader exactly (docs/rules.md#span-records, docs/rules.md#line-splitting): lines are split with
``str.splitlines``, blank lines (``str.strip()`` empty) are skipped, every other line must be a
JSON object with ``name``, ``context.span_id``, ``context.trace_id``, ``start_time`` and
``end_time``. Where the workbench would crash the run is marked unlintable (an issue with
``lint=True``) and everything that can be read is still loaded.
"""

from __future__ import annotations

import base64
import binascii
from operator import itemgetter

from groundwork.core import native

from groundwork.ingest import issues as K
from groundwork.ingest.issues import Issues
from groundwork.core.jsontext import (MAX_LINE, TimeProblem, dumps, dumps_doc, has_lone_surrogate, is_blank, iso_times,
                       may_hold_surrogate, needs_exact, parse, pystr_repr, strip0x, vstr)

# The span attributes the workbench owns, each copied into a column of its own (dd.x_y -> dd_x_y);
# the grounding mode's JSON text is kept too (docs/schema.md, spans).
OWNED = ("dd.operation", "dd.agent_id", "dd.source_id", "dd.content_hash", "dd.model_id",
         "dd.input_tokens", "dd.output_tokens", "dd.outcome", "dd.grounding_mode", "dd.input_hash")
OWNED_COLUMNS = tuple("dd_" + key.removeprefix("dd.").replace(".", "_") for key in OWNED)
GROUNDING_MODE = "dd.grounding_mode"
# A span row's columns, in the order _row (and the C path, told at load) builds them; the rows go
# into the spans table by these names (tables.to_arrow), so this order is defined here only.
FIELDS = ("invocation_id", "ord", "line_no", "source_format", "name", "name_json", "span_id", "trace_id",
          "parent_id", "start_time", "end_time", *OWNED_COLUMNS, "dd_grounding_mode_json",
          "dd_grounding_mode_is_string", "status_code", "service_name", "attributes", "start_unix_nano",
          "end_unix_nano", "start_workbench_ns", "end_workbench_ns")
_ABSENT = object()
STATUS_CODES = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET",
                "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}


# The C fast path (ingest/_spans_native.c), given the constants above once; None when it is not
# built, GROUNDWORK_NATIVE=off, or it does not accept them.
_native = native.load("groundwork.ingest._spans_native",
                      lambda c: c.configure(FIELDS, OWNED, OWNED_COLUMNS, GROUNDING_MODE))
# (name, span_id, parent_id, line_no) of a row, for its SpanRecord
_record_fields = itemgetter(*(FIELDS.index(f) for f in ("name", "span_id", "parent_id", "line_no")))


class SpanRecord:
    """What the tree checks need of one loaded span (for the cycle check)."""

    __slots__ = ("name", "span_id", "parent_id", "line")

    def __init__(self, name, span_id, parent_id, line):
        self.name, self.span_id, self.parent_id, self.line = name, span_id, parent_id, line


def _row(inv, ord_, line_no, fmt, name, name_present, span_id, trace_id, parent_id,
         start_us, end_us, attrs, attrs_json, status_code, service_name, start_ns, end_ns, fast=False,
         start_wb=None, end_wb=None):
    if isinstance(attrs, dict):
        dd = [None if (v := attrs.get(k, _ABSENT)) is _ABSENT else v if type(v) is str and v.isascii() else vstr(v)
              for k in OWNED]
        if GROUNDING_MODE in attrs:
            gm = attrs[GROUNDING_MODE]
            gm_json, gm_is_str = dumps(gm, fast), isinstance(gm, str)
        else:
            gm_json, gm_is_str = None, False
    else:
        dd = [None] * len(OWNED)
        gm_json, gm_is_str = None, False
    return (inv, ord_, line_no, fmt,
            vstr(name) if name_present else None, dumps(name, fast) if name_present else None,
            span_id, trace_id, parent_id, start_us, end_us,
            *dd, gm_json, gm_is_str, status_code, service_name, attrs_json, start_ns, end_ns, start_wb, end_wb)


def native_spans(data: str | bytes, inv: str):
    """parse_spans' result from the C fast path (the raw file bytes or the decoded text), or None
    when it is off or declines: then parse_spans must run. An accepted file is printable ASCII
    and has no issue at all; it has no span exactly when it holds only spaces and newlines."""
    if _native is None:
        return None
    rows = _native.sdk_rows(data, inv, iso_times)
    if rows is None:
        return None
    return rows, "sdk" if rows else None, [SpanRecord(*_record_fields(r)) for r in rows]


def parse_spans(text: str, inv: str, path: str, issues: Issues, ends_with_newline: bool, exact: bool | None = None,
                surrogates: bool | None = None, try_native: bool = True):
    """Parse the decoded text of a spans file.

    Returns ``(rows, span_format, records)``: span rows (FIELDS), ``sdk``/``otlp``/``mixed`` (None
    when there is no span), and the records for the cycle check. ``try_native=False``: the
    caller already had native_spans decline this file.
    """
    rows: list[tuple] = []
    records: list[SpanRecord] = []
    formats: set[str] = set()
    if exact is None:
        exact = needs_exact(text)
    if surrogates is None:
        surrogates = may_hold_surrogate(text)
    if try_native and not exact and not surrogates:
        # Every line a well-formed SDK span line in a restricted JSON grammar (printable ASCII, no
        # escapes, floats or duplicate keys): the same result from C, or None -> the path below.
        parsed = native_spans(text, inv)
        if parsed is not None:
            return parsed
    lone_found = False
    first_otlp = 0   # the first OTLP line (0: none yet)
    lines = text.splitlines()
    last = len(lines)
    for line_no, line in enumerate(lines, 1):
        if is_blank(line):
            continue
        if len(line) * 4 > MAX_LINE and len(line.encode("utf-8", "surrogatepass")) > MAX_LINE:
            # (ingest/scan.py drops such lines while reading; a text given whole still has them)
            issues.add(path, line_no, K.LINE_TOO_LONG, long_line_message(len(line.encode("utf-8", "surrogatepass"))),
                       lint=True)
            continue
        try:
            doc, fast = parse(line, exact)
        except RecursionError:
            issues.add(path, line_no, K.MALFORMED_JSON, "JSON nested too deeply for Python's json module", lint=True)
            continue
        except ValueError as exc:
            if line_no == last and not ends_with_newline and _at_end(exc, line):
                issues.add(path, line_no, K.TRUNCATED,
                           f"last line is cut off (no final newline; {exc})", lint=True)
            else:
                issues.add(path, line_no, K.MALFORMED_JSON, f"invalid JSON ({exc})", lint=True)
            continue
        if surrogates and not lone_found and "\\u" in line:
            lone_found = has_lone_surrogate(doc)
            if lone_found:
                issues.add(path, line_no, K.LONE_SURROGATE,
                           "contains a lone UTF-16 surrogate escape (e.g. \\ud800); text columns show U+FFFD, "
                           "the *_json columns keep the exact value")
        # A line with the workbench's "context" is read as the workbench reads it, whatever other
        # keys it carries (docs/rules.md#spans: other keys are ignored); the OTLP forms have none.
        if isinstance(doc, dict) and "resourceSpans" in doc and "context" not in doc:
            formats.add("otlp")
            first_otlp = first_otlp or line_no
            _otlp_batch(doc, inv, line_no, path, issues, rows, records)
        elif isinstance(doc, dict) and "traceId" in doc and "context" not in doc:
            formats.add("otlp")
            first_otlp = first_otlp or line_no
            _otlp_span(doc, None, inv, line_no, path, issues, rows, records)
        else:
            formats.add("sdk")
            _sdk_line(doc, inv, line_no, path, issues, rows, records, fast)
    if len(formats) > 1:
        # docs/rules.md#spans: a file the workbench wrote holds its own span lines only; it reads
        # an OTLP line as one of them and crashes on the missing name / context
        issues.add(path, first_otlp, K.MISSING_KEY, "an OTLP line among workbench span lines (no 'context'): "
                   "the workbench reads every line as its own span form and crashes on it", lint=True)
    fmt = None if not formats else formats.pop() if len(formats) == 1 else "mixed"
    return rows, fmt, records


def long_line_message(nbytes: int) -> str:
    """The issue of a spans.jsonl line over MAX_LINE bytes, which is not loaded
    (docs/rules.md#too-large-runs)."""
    return (f"line is {nbytes:,} bytes, over the {MAX_LINE // (1 << 20)} MiB per-object limit of DuckDB and OTLP "
            "receivers; not loaded, so the run cannot be linted as the workbench would")


def _at_end(exc: ValueError, line: str) -> bool:
    pos = getattr(exc, "pos", None)
    return pos is not None and pos >= len(line.rstrip())


# ------------------------------------------------------------------------------------- SDK


def _ascii_str(value) -> bool:
    return type(value) is str and value.isascii()


def _sdk_line(doc, inv, line_no, path, issues: Issues, rows, records, fast: bool = False) -> None:
    """One SDK span line -> a span row (and its issues). A well-formed line (nearly all of them)
    skips the checks of _sdk_line_checked and gets the same row."""
    fields = _well_formed_sdk(doc)
    if fields is None:
        _sdk_line_checked(doc, inv, line_no, path, issues, rows, records, fast)
        return
    name, span_id, trace_id, parent_id, (start_us, start_wb), (end_us, end_wb), raw_attrs = fields
    attrs, attrs_json = ({}, "{}") if raw_attrs is None else (raw_attrs, dumps_doc(raw_attrs, fast))
    status_code, service = _status_and_service(doc)
    rows.append(_row(inv, len(rows), line_no, "sdk", name, True, span_id, trace_id,
                     parent_id, start_us, end_us, attrs, attrs_json, status_code, service,
                     _ns(start_us), _ns(end_us), fast, start_wb, end_wb))
    records.append(SpanRecord(name, span_id, parent_id, line_no))


def _well_formed_sdk(doc):
    """(name, span_id, trace_id, parent_id, start times, end times, attributes) of a line that
    _sdk_line_checked reads without an issue and whose name, ids and times are ASCII strings
    (so str() leaves them as they are); None for any other line."""
    if type(doc) is not dict:
        return None
    context, name = doc.get("context"), doc.get("name")
    start, end = doc.get("start_time"), doc.get("end_time")
    raw_parent, raw_attrs = doc.get("parent_id"), doc.get("attributes")
    if not (type(context) is dict and _ascii_str(name) and _ascii_str(start) and _ascii_str(end)
            and (raw_parent is None or _ascii_str(raw_parent)) and (raw_attrs is None or type(raw_attrs) is dict)):
        return None
    span_id, trace_id = context.get("span_id"), context.get("trace_id")
    if not (_ascii_str(span_id) and _ascii_str(trace_id)):
        return None
    try:
        start_times, end_times = iso_times(start), iso_times(end)
    except (TimeProblem, OverflowError):
        return None
    return (name, strip0x(span_id), strip0x(trace_id), strip0x(raw_parent) if raw_parent else None,
            start_times, end_times, raw_attrs)


def _status_and_service(doc: dict) -> tuple[str | None, str | None]:
    """str() of status.status_code and of resource.attributes["service.name"] (None when absent)."""
    status = doc.get("status")
    status_code = vstr(status["status_code"]) if isinstance(status, dict) and "status_code" in status else None
    resource = doc.get("resource")
    res_attrs = resource.get("attributes") if isinstance(resource, dict) else None
    service = vstr(res_attrs["service.name"]) if isinstance(res_attrs, dict) and "service.name" in res_attrs else None
    return status_code, service


def _sdk_line_checked(doc, inv, line_no, path, issues: Issues, rows, records, fast: bool = False) -> None:
    def crash(kind: str, message: str) -> None:
        issues.add(path, line_no, kind, message, lint=True)

    if not isinstance(doc, dict):
        crash(K.WRONG_TYPE, f"span line is a JSON {type(doc).__name__}, not an object")
        return
    for key in ("name", "context", "start_time", "end_time"):
        if key not in doc:
            crash(K.MISSING_KEY, f"span line lacks the required key {key!r}")
    context = doc.get("context")
    span_id = trace_id = None
    if "context" in doc:
        if not isinstance(context, dict):
            crash(K.WRONG_TYPE, "span context is not an object")
        else:
            for key in ("span_id", "trace_id"):
                if key not in context:
                    crash(K.MISSING_KEY, f"span line lacks the required key context.{key}")
            span_id = _sdk_id(context, "span_id", crash)
            trace_id = _sdk_id(context, "trace_id", crash)
    raw_parent = doc.get("parent_id")
    if not raw_parent:  # docs/rules.md#span-records: any falsy parent_id means no parent
        parent_id = None
    elif isinstance(raw_parent, str):
        parent_id = vstr(strip0x(raw_parent))
    else:
        crash(K.WRONG_TYPE, f"parent_id {pystr_repr(raw_parent)} is not a string")
        parent_id = vstr(raw_parent)
    start_us, start_wb = _sdk_time(doc, "start_time", crash)
    end_us, end_wb = _sdk_time(doc, "end_time", crash)
    raw_attrs = doc.get("attributes")
    if raw_attrs is None:
        attrs, attrs_json = {}, "{}"
    else:
        attrs, attrs_json = raw_attrs, dumps_doc(raw_attrs, fast)
        if not isinstance(raw_attrs, dict):
            crash(K.WRONG_TYPE, "span attributes is not an object")
    status_code, service = _status_and_service(doc)
    name_present = "name" in doc
    rows.append(_row(inv, len(rows), line_no, "sdk", doc.get("name"), name_present, span_id, trace_id,
                     parent_id, start_us, end_us, attrs, attrs_json, status_code, service,
                     _ns(start_us), _ns(end_us), fast, start_wb, end_wb))
    records.append(SpanRecord(doc.get("name"), span_id, parent_id, line_no))


def _string_field(doc: dict, key: str, label: str, crash):
    """(present, value, is_string); a present non-string value is a crash of the workbench."""
    if key not in doc:
        return False, None, False
    value = doc[key]
    if not isinstance(value, str):
        crash(K.WRONG_TYPE, f"{label} {pystr_repr(value)} is not a string")
        return True, value, False
    return True, value, True


def _sdk_id(context: dict, key: str, crash):
    present, value, ok = _string_field(context, key, f"context.{key}", crash)
    if not present:
        return None
    return vstr(strip0x(value)) if ok else vstr(value)


def _sdk_time(doc: dict, key: str, crash):
    """(microseconds, workbench time key) of a span time, (None, None) when unusable."""
    if key not in doc:
        return None, None
    try:
        return iso_times(doc[key])
    except TimeProblem as exc:
        crash(exc.kind, f"{key} {exc}")
    except OverflowError as exc:
        crash(K.BAD_TIME, f"{key} {exc}")
    return None, None


def _ns(us: int | None) -> int | None:
    """Microseconds -> nanoseconds when that fits a BIGINT (years 1678-2261), else NULL."""
    if us is None or not -(2**63) <= us * 1000 < 2**63:
        return None
    return us * 1000


# ------------------------------------------------------------------------------------- OTLP


def _otlp_batch(doc: dict, inv, line_no, path, issues: Issues, rows, records) -> None:
    def bad(message: str) -> None:
        issues.add(path, line_no, K.WRONG_TYPE, message, lint=True)

    rss = doc.get("resourceSpans")
    if not isinstance(rss, list):
        bad("OTLP resourceSpans is not a list")
        return
    for rs in rss:
        if not isinstance(rs, dict):
            bad("OTLP resourceSpans element is not an object")
            continue
        resource = rs.get("resource") or {}
        res_attrs = otlp_attributes(resource.get("attributes") if isinstance(resource, dict) else None)
        service = vstr(res_attrs["service.name"]) if isinstance(res_attrs, dict) and "service.name" in res_attrs else None
        scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", []))
        if not isinstance(scopes, list):
            bad("OTLP scopeSpans is not a list")
            continue
        for ss in scopes:
            spans = ss.get("spans", []) if isinstance(ss, dict) else None
            if not isinstance(spans, list):
                bad("OTLP scopeSpans element has no spans list")
                continue
            for span in spans:
                _otlp_span(span, service, inv, line_no, path, issues, rows, records)


def _otlp_span(span, service, inv, line_no, path, issues: Issues, rows, records) -> None:
    def crash(kind: str, message: str) -> None:
        issues.add(path, line_no, kind, message, lint=True)

    if not isinstance(span, dict):
        crash(K.WRONG_TYPE, "OTLP span is not an object")
        return
    for key in ("name", "traceId", "spanId", "startTimeUnixNano", "endTimeUnixNano"):
        if key not in span:
            crash(K.MISSING_KEY, f"OTLP span lacks the required key {key!r}")
    trace_id = _otlp_id(span, "traceId", 16, crash)
    span_id = _otlp_id(span, "spanId", 8, crash)
    parent_id = _otlp_id(span, "parentSpanId", 8, crash) or None  # "" = no parent
    start_ns = _otlp_nanos(span, "startTimeUnixNano", crash)
    end_ns = _otlp_nanos(span, "endTimeUnixNano", crash)
    try:
        attrs = otlp_attributes(span.get("attributes"))
    except (TypeError, ValueError, AttributeError) as exc:
        crash(K.WRONG_TYPE, f"OTLP attributes are not a key/value list ({exc})")
        attrs = {}
    status = span.get("status")
    status_code = None
    if isinstance(status, dict):
        code = status.get("code", 0)
        status_code = STATUS_CODES.get(code, vstr(code)) if not isinstance(code, bool) else vstr(code)
    rows.append(_row(inv, len(rows), line_no, "otlp", span.get("name"), "name" in span, span_id, trace_id,
                     parent_id, None if start_ns is None else start_ns // 1000,
                     None if end_ns is None else end_ns // 1000, attrs, dumps_doc(attrs), status_code,
                     service, start_ns, end_ns, False,
                     None if start_ns is None else float(start_ns), None if end_ns is None else float(end_ns)))
    records.append(SpanRecord(span.get("name"), span_id, parent_id, line_no))


def _otlp_id(span: dict, key: str, nbytes: int, crash) -> str | None:
    present, value, ok = _string_field(span, key, f"OTLP {key}", crash)
    if not present:
        return None
    if not ok:
        return vstr(value)
    if value == "":
        return ""
    low = value.lower()
    if len(low) == 2 * nbytes and all(c in "0123456789abcdef" for c in low):
        return low
    try:  # some exporters still send base64 ids (proto3 JSON default)
        raw = base64.b64decode(value, validate=True)
        if len(raw) == nbytes:
            return raw.hex()
    except (binascii.Error, ValueError):
        pass
    return vstr(value)


def _otlp_nanos(span: dict, key: str, crash) -> int | None:
    if key not in span:
        return None
    value = span[key]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        crash(K.WRONG_TYPE, f"OTLP {key} {pystr_repr(value)} is neither a string nor an integer")
        return None
    try:
        ns = int(value)
    except ValueError:
        crash(K.BAD_TIME, f"OTLP {key} {pystr_repr(value)} is not a decimal number of nanoseconds")
        return None
    if not 0 <= ns < 2**63:
        crash(K.BAD_TIME, f"OTLP {key} {ns} is out of range")
        return None
    return ns


def otlp_value(v):
    """OTLP AnyValue -> the plain JSON value the SDK form would carry."""
    if not isinstance(v, dict):
        raise TypeError("AnyValue is not an object")
    if "stringValue" in v:
        return v["stringValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        d = v["doubleValue"]
        return float(d) if not isinstance(d, float) else d
    if "arrayValue" in v:
        return [otlp_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return otlp_attributes((v["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def otlp_attributes(kvs) -> dict:
    """OTLP key/value list -> dict (last duplicate key wins, like the SDK's dict)."""
    if kvs is None:
        return {}
    if not isinstance(kvs, list):
        raise TypeError("attributes is not a list")
    out = {}
    for kv in kvs:
        out[kv["key"]] = otlp_value(kv.get("value", {}))
    return out


# ------------------------------------------------------------------------------------- cycles


def check_cycles(records: list[SpanRecord], path: str, issues: Issues) -> None:
    """Record span-id cycles (docs/rules.md#gw1). A cycle reachable from the single invoke_agent root
    makes the workbench's traversal loop forever -> unlintable; any other cycle is recorded only.

    Nodes are span-id values; an edge p -> c exists for every record with parent_id p and
    span_id c (children are found by id, so the root's own parent_id takes part too).
    """
    children: dict[str, list[SpanRecord]] = {}
    for r in records:
        if r.parent_id is not None and r.span_id is not None:
            children.setdefault(r.parent_id, []).append(r)
    if not children:
        return
    roots = [r for r in records if r.name == "invoke_agent"]
    colour: dict[str, int] = {}
    starts = ([roots[0].span_id] if len(roots) == 1 and roots[0].span_id is not None else [])
    starts += [r.span_id for r in records if r.span_id is not None]
    for i, start in enumerate(starts):
        if start in colour:
            continue
        found = _find_cycle(start, children, colour)
        if found is not None:
            reachable = i == 0 and len(roots) == 1
            if reachable:
                issues.add(path, found.line, K.CYCLE,
                           f"span ids form a cycle reachable from the invoke_agent root (through span {found.span_id}); "
                           "the workbench linter would never finish", lint=True)
            else:
                issues.add(path, found.line, K.CYCLE,
                           f"span ids form a cycle (through span {found.span_id}) that the invoke_agent root "
                           "does not reach; linted normally")
            return


def _find_cycle(start: str, children, colour) -> SpanRecord | None:
    GREY, BLACK = 1, 2
    colour[start] = GREY
    stack = [(start, iter(children.get(start, ())))]
    while stack:
        node, kids = stack[-1]
        for kid in kids:
            state = colour.get(kid.span_id, 0)
            if state == GREY:
                return kid
            if state == 0:
                colour[kid.span_id] = GREY
                stack.append((kid.span_id, iter(children.get(kid.span_id, ()))))
                break
        else:
            colour[node] = BLACK
            stack.pop()
    return None
