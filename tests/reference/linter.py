"""Reference grounding linter, written from the description of the workbench alone
(docs/rules.md#span-records, docs/rules.md#lint-order, docs/rules.md#edge-cases).

Plain Python, no groundwork imports: it is the independent oracle the SQL rules are held to.
Messages use Python's own ``repr``/``str`` (CPython 3.11, Unicode 14.0 — docs/rules.md#repr).

Where the workbench itself would crash or hang (docs/rules.md#edge-cases), ``lint`` raises
``Unlintable(reason)`` instead of returning a report. Choices where the description is silent:

* a non-object span line, a ``context`` that is not an object, a non-string ``span_id`` /
  ``trace_id`` / ``start_time`` / ``end_time``, an unparsable or naive time (K1), and an
  ``attributes`` value that is neither an object nor null/missing are treated like a missing
  required key: unlintable;
* an envelope that is not an object is unlintable whatever step the linter would stop at (the
  report's mode is read from it at both stops);
* the other data-level crashes happen only where the linter reads the value (C6,
  docs/rules.md#early-stops): a non-list truthy ``evidence`` or a non-object evidence element at
  steps 6-7, a truthy ``delegations`` that is not iterable when the delegation rules build the
  citable set, a truthy non-object ``outcome`` when a mode rule asks whether the envelope
  succeeded (G2(b), R3, D3). Steps 1 and 3 stop before any of them, so such a run gets its step-1
  or step-3 report; ``delegations`` is never read outside delegation mode;
* a cycle makes the run unlintable only when the traversal runs, i.e. with exactly one root (C4).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from .canon import HashingError, content_hash

MODES = ("retrieval", "input_only", "none", "delegation")
OWNED = ("dd.operation", "dd.agent_id", "dd.source_id", "dd.content_hash", "dd.model_id",
         "dd.input_tokens", "dd.output_tokens", "dd.outcome", "dd.grounding_mode", "dd.input_hash")
CONDUCTOR_KEYS = ("dd.grounding_mode", "dd.input_hash", "dd.outcome")
ELL = "\u2026"


class Unlintable(Exception):
    """The workbench linter would crash or hang on this input; str() is the reason."""

    @property
    def reason(self) -> str:
        return str(self)


@dataclass
class Span:
    name: object
    span_id: str
    trace_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    attributes: dict
    line: int


@dataclass
class Report:
    passed: bool
    mode: str | None
    violations: list[str] = field(default_factory=list)
    retrieval_count: int = 0
    chat_count: int = 0


# ----------------------------------------------------------------------------------- reading


def _strip0x(value, what: str, line: int) -> str:
    if not isinstance(value, str):
        raise Unlintable(f"spans line {line}: {what} is not a string")
    return value[2:] if value.startswith("0x") else value


def _time_ns(value, what: str, line: int) -> int:
    if not isinstance(value, str):
        raise Unlintable(f"spans line {line}: {what} is not a string")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise Unlintable(f"spans line {line}: {what} {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise Unlintable(f"spans line {line}: {what} {value!r} has no UTC offset")
    return int(moment.timestamp() * 1e9)


def read_spans(text: str) -> list[Span]:
    """docs/rules.md#span-records: str.splitlines, skip blank lines, one JSON object per line."""
    spans = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise Unlintable(f"spans line {line_no}: invalid JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise Unlintable(f"spans line {line_no}: not a JSON object")
        for key in ("name", "context", "start_time", "end_time"):
            if key not in doc:
                raise Unlintable(f"spans line {line_no}: missing required key {key!r}")
        context = doc["context"]
        if not isinstance(context, dict):
            raise Unlintable(f"spans line {line_no}: context is not an object")
        for key in ("span_id", "trace_id"):
            if key not in context:
                raise Unlintable(f"spans line {line_no}: missing required key context.{key}")
        raw_parent = doc.get("parent_id")
        if not raw_parent:  # C1: any falsy parent_id means no parent
            parent = None
        elif isinstance(raw_parent, str):
            parent = raw_parent[2:] if raw_parent.startswith("0x") else raw_parent
        else:
            raise Unlintable(f"spans line {line_no}: parent_id {raw_parent!r} is not a string")
        raw_attrs = doc.get("attributes")
        if raw_attrs is None:
            raw_attrs = {}
        if not isinstance(raw_attrs, dict):
            raise Unlintable(f"spans line {line_no}: attributes is not an object")
        spans.append(Span(
            name=doc["name"],
            span_id=_strip0x(context["span_id"], "context.span_id", line_no),
            trace_id=_strip0x(context["trace_id"], "context.trace_id", line_no),
            parent_id=parent,
            start_ns=_time_ns(doc["start_time"], "start_time", line_no),
            end_ns=_time_ns(doc["end_time"], "end_time", line_no),
            attributes={k: v for k, v in raw_attrs.items() if k in OWNED},
            line=line_no,
        ))
    return spans


# ----------------------------------------------------------------------------------- tree


def _children_by_parent(spans: list[Span]) -> dict[str, list[Span]]:
    children: dict[str, list[Span]] = {}
    for span in spans:
        if span.parent_id is not None:
            children.setdefault(span.parent_id, []).append(span)
    return children


def _assert_no_reachable_cycle(root: Span, children: dict[str, list[Span]]) -> None:
    """C4: the upstream traversal never ends iff a span-id cycle is reachable from the root.

    Nodes are span-id values (children are found by id, so copies share children); an edge
    p -> c exists for every record with parent_id p and span_id c.
    """
    WHITE, GREY, BLACK = 0, 1, 2
    colour: dict[str, int] = {}
    stack = [(root.span_id, iter(children.get(root.span_id, ())))]
    colour[root.span_id] = GREY
    while stack:
        node, kids = stack[-1]
        for kid in kids:
            state = colour.get(kid.span_id, WHITE)
            if state == GREY:
                raise Unlintable(f"span-id cycle reachable from the root (through span {kid.span_id})")
            if state == WHITE:
                colour[kid.span_id] = GREY
                stack.append((kid.span_id, iter(children.get(kid.span_id, ()))))
                break
        else:
            colour[node] = BLACK
            stack.pop()


def descendants_of(root: Span, spans: list[Span]) -> list[Span]:
    """docs/rules.md#span-tree: explicit stack; a popped node appends all its children (file
    order) to the output and pushes them; the last pushed is popped next. Copies are visited
    once per path."""
    children = _children_by_parent(spans)
    _assert_no_reachable_cycle(root, children)
    out: list[Span] = []
    stack = [root]
    while stack:
        node = stack.pop()
        kids = children.get(node.span_id, [])
        out.extend(kids)
        stack.extend(kids)
    return out


# ----------------------------------------------------------------------------------- envelope


def read_evidence(envelope) -> list:
    """The evidence elements, as steps 6-7 read them (C2: falsy is none), raising where the
    workbench crashes: a truthy non-list is iterated (characters, keys) or not iterable, and an
    element that is not an object has no .get."""
    evidence = envelope.get("evidence") or []
    if not isinstance(evidence, list):
        raise Unlintable("evidence is not a list")
    for ev in evidence:
        if not isinstance(ev, dict):
            raise Unlintable("evidence element is not an object")
    return evidence


def read_delegations(envelope) -> list:
    """The object entries of ``delegations``, as the delegation rules read them (C3: a string
    iterates as characters, an object as its keys, none an object); not iterable: a crash."""
    delegations = envelope.get("delegations") or []
    if not isinstance(delegations, (list, str, dict)):
        raise Unlintable("delegations is not iterable")
    return [d for d in delegations if isinstance(d, dict)]


def read_succeeded(envelope) -> bool:
    """Whether the outcome's status is succeeded, as G2(b), R3 and D3 read it (K6: a falsy
    outcome is no outcome; a truthy non-object has no .get: a crash)."""
    outcome = envelope.get("outcome") or {}
    if not isinstance(outcome, dict):
        raise Unlintable("outcome is not an object")
    return outcome.get("status") == "succeeded"


def grounded_on_values(value):
    """docs/rules.md#grounded-references: values under `grounded_on` keys, document order, not
    descending into them."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "grounded_on":
                yield item
            else:
                yield from grounded_on_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from grounded_on_values(item)


def _h(text: str) -> str:
    return text[:12]


# ----------------------------------------------------------------------------------- linter


def lint_records(spans: list[Span], envelope) -> Report:
    if not isinstance(envelope, dict):
        raise Unlintable("envelope is not a JSON object")
    declared = envelope.get("grounding_mode")
    report_mode = str(declared) if declared else None

    roots = [s for s in spans if s.name == "invoke_agent"]
    if len(roots) != 1:  # step 1
        return Report(False, report_mode,
                      [f"G0: expected exactly one invoke_agent span, found {len(roots)}"], 0, 0)
    root = roots[0]
    descendants = descendants_of(root, spans)
    descendant_ids = {s.span_id for s in descendants}
    retrievals = [s for s in descendants if s.name == "retrieval"]
    chats = [s for s in descendants if s.name == "chat"]

    violations: list[str] = []
    for span in spans:  # step 2
        if span is root:
            continue
        if span.trace_id != root.trace_id:
            violations.append(f"G0: span {span.name!r} ({span.span_id}) is in trace {span.trace_id}, "
                              f"not the invocation's trace {root.trace_id}")
        elif span.span_id not in descendant_ids:
            violations.append(f"G0: span {span.name!r} ({span.span_id}) does not descend from invoke_agent")
        keys = [k for k in CONDUCTOR_KEYS if k in span.attributes]
        if keys:
            violations.append(f"G0: span {span.name!r} ({span.span_id}) sets {', '.join(keys)}, "
                              "which only the conductor's invoke_agent span may carry")

    if str(declared) not in MODES:  # step 3
        return Report(False, report_mode,
                      [f"G0: envelope declares no valid grounding_mode ({declared!r})"],
                      len(retrievals), len(chats))
    mode = str(declared)

    span_mode = root.attributes.get("dd.grounding_mode")  # step 4
    if span_mode != mode:
        violations.append(f"G0: envelope declares grounding_mode {mode!r} but the root span carries {span_mode!r}")

    payload = envelope.get("payload")  # step 5
    if payload is not None:
        if not isinstance(payload, dict):
            violations.append("G0: payload is not an object")
        else:
            if "schema_class" not in payload:
                violations.append("G0: payload lacks schema_class")
            if "grounded_on" not in payload:
                violations.append(f"G0: payload {payload.get('schema_class')!r} lacks grounded_on; "
                                  "an ungroundable payload is a violation, not a pass")

    grounded: list[tuple[str, str]] = []  # step 6
    for value in grounded_on_values(payload):
        if not isinstance(value, list):
            violations.append("G0: grounded_on is not a list")
            continue
        for element in value:
            if (isinstance(element, dict) and isinstance(element.get("source_id"), str)
                    and isinstance(element.get("content_hash"), str)):
                grounded.append((element["source_id"], element["content_hash"]))
            else:
                violations.append(f"G0: malformed grounding reference {element!r}")

    evidence = read_evidence(envelope)
    for ev in evidence:  # step 7 (E1)
        content = ev.get("content")
        if content is None:
            continue
        sid = ev.get("source_id")
        if not isinstance(content, dict):
            violations.append(f"E1: evidence {sid!r} content is not an object")
            continue
        try:
            actual = content_hash(str(ev.get("canonicalisation")), content)
        except HashingError as exc:
            violations.append(f"E1: evidence {sid!r}: {exc}")
            continue
        if actual != str(ev.get("content_hash")):
            violations.append(f"E1: evidence {sid!r} content does not hash to its content_hash "
                              f"({_h(str(ev.get('content_hash')))}{ELL}) under {ev.get('canonicalisation')!r}")

    evidence_pairs = [(str(ev.get("source_id")), str(ev.get("content_hash"))) for ev in evidence]
    evidence_hashes = {h for _, h in evidence_pairs}
    retrieved = {(str(s.attributes.get("dd.source_id")), str(s.attributes.get("dd.content_hash")))
                 for s in retrievals}
    retrieved_hashes = {h for _, h in retrieved}
    input_pair = ("input:" + str(envelope.get("invocation_id")), str(root.attributes.get("dd.input_hash")))

    def citable():
        return {input_pair} | {("invocation:" + str(d.get("delegated_invocation_id")), str(d.get("content_hash")))
                               for d in read_delegations(envelope)}

    def g1():
        if chats and not retrievals:
            violations.append("G1: a chat span exists but no retrieval span does")
            return
        if retrievals:
            first_end = min(r.end_ns for r in retrievals)
            for chat in chats:
                if chat.start_ns < first_end:
                    violations.append(f"G1: chat span {chat.span_id} started before the first retrieval span ended")

    def g2():
        for sid, h in grounded:
            if (sid, h) not in retrieved:
                violations.append(f"G2: payload rests on {sid!r} ({_h(h)}{ELL}) which was not retrieved in this invocation")
        if read_succeeded(envelope) and payload is not None and not grounded:
            violations.append("G2: a succeeded retrieval-mode payload rests on nothing")

    def g3():
        for sid, h in evidence_pairs:
            if h not in retrieved_hashes:
                violations.append(f"G3: evidence {sid!r} hash {_h(h)}{ELL} not in trace")

    def g4():
        for sid, h in grounded:
            if h not in evidence_hashes:
                violations.append(f"G4: payload rests on {sid!r} ({_h(h)}{ELL}) absent from evidence")

    def r1():
        if retrievals:
            violations.append(f"R1: {len(retrievals)} retrieval span(s) in an agent that declared none")

    def r2():
        for label, pairs in (("payload", grounded), ("evidence", evidence_pairs)):
            for sid, h in pairs:
                if (sid, h) != input_pair:
                    violations.append(f"R2: {label} cites {sid!r} ({_h(h)}{ELL}); an input-grounded agent "
                                      f"may cite only {input_pair[0]!r} ({_h(input_pair[1])}{ELL})")

    def r3():
        if read_succeeded(envelope) and not evidence:
            violations.append("R3: a succeeded input-grounded envelope cites no evidence")

    def n1():
        if chats:
            violations.append(f"N1: {len(chats)} chat span(s) in an agent that declared no model call")

    def d1():
        cite = citable()
        for sid, h in grounded:
            if (sid, h) not in cite:
                violations.append(f"D1: payload rests on {sid!r} ({_h(h)}{ELL}), which is neither the input "
                                  "nor a delegation recorded by the conductor")

    def d2():
        cite = citable()
        for sid, h in evidence_pairs:
            if (sid, h) not in cite:
                violations.append(f"D2: evidence {sid!r} ({_h(h)}{ELL}) is neither the input nor a delegation "
                                  "recorded by the conductor")

    def d3():
        if read_succeeded(envelope) and input_pair not in evidence_pairs:
            violations.append("D3: a succeeded delegation envelope does not cite its input in evidence")

    rules = {"retrieval": (g1, g2, g3, g4), "input_only": (r1, r2, r3), "none": (r1, r2, r3, n1),
             "delegation": (r1, d1, d2, g4, d3)}
    for rule in rules[mode]:  # step 8
        rule()
    return Report(not violations, mode, violations, len(retrievals), len(chats))


def lint(spans_text: str, envelope) -> Report:
    """Lint one run: the text of spans.jsonl and the parsed envelope document."""
    spans = read_spans(spans_text)
    try:
        return lint_records(spans, envelope)
    except RecursionError:  # the recursive grounded_on walk (6.5) runs out of stack, as upstream's would
        raise Unlintable("payload nested too deeply for the grounded_on walk") from None


def read_envelope_bytes(data: bytes):
    """Parse envelope.json like the workbench: strict UTF-8 (a BOM fails), json.loads."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unlintable(f"envelope is not UTF-8 ({exc})") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # too deep a nesting crashes the workbench's parser too
        raise Unlintable(f"envelope is not valid JSON ({exc})") from None


def lint_files(spans_path, envelope_path) -> Report:
    """`workbench lint SPANS ENVELOPE` on two files."""
    with open(spans_path, "rb") as fh:
        raw = fh.read()
    try:
        spans_text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unlintable(f"spans.jsonl is not UTF-8 ({exc})") from None
    with open(envelope_path, "rb") as fh:
        envelope = read_envelope_bytes(fh.read())
    return lint(spans_text, envelope)


def summary(report: Report) -> str:
    """docs/rules.md#grounding-text: the grounding.txt text without its final newline."""
    label = report.mode or "unknown mode"
    if report.passed:
        return (f"grounding: passed [{label}] ({report.retrieval_count} retrieval, "
                f"{report.chat_count} chat spans)")
    return f"grounding: FAILED [{label}]" + "".join(f"\n  - {v}" for v in report.violations)
