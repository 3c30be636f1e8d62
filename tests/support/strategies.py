"""Hypothesis strategies that build whole workbench run folders (docs/rules.md#run-folder, docs/rules.md#spans, docs/rules.md#envelope, docs/rules.md#canonical-json).

A *run* is a ``RunFiles`` (folder name + the bytes of ``spans.jsonl``, ``envelope.json``,
``request.json``); ``archives()`` draws a batch of runs that is written to one archive directory,
so the SQL side is exercised with one ingest + one lint per hypothesis example.

Runs start from a coherent run of one of the four modes (so passing runs are common) and then
receive a few perturbations covering every rule of docs/rules.md#rules and the edge cases of docs/rules.md#edge-cases:
0 or 2 roots, foreign traces, parentless and nested spans, conductor keys on agent spans,
duplicate span ids with children, cycles, missing / non-string attributes, invalid modes,
odd payloads and ``grounded_on`` at any depth, malformed evidence, unknown canonicalisations,
floats vs ints in content, time offsets, CRLF / whitespace lines and hostile strings.
``corpus_mutations()`` copies a real corpus run and perturbs one field.

Serialisation follows the workbench: span lines are the SDK ``to_json`` form written with
``json.dumps`` defaults; ``envelope.json`` / ``request.json`` use ``json.dumps(indent=2)`` with no
trailing newline.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import strategies as st

from reference.canon import HashingError, projection
from reference.canon import content_hash as _content_hash


def content_hash(name, doc) -> str:
    """The hash a (well-behaved) agent would state; documents with lone surrogates cannot be
    hashed at all, so those get a fixed stand-in."""
    try:
        return _content_hash(name, doc)
    except HashingError:
        return "f" * 64

MODES = ["retrieval", "input_only", "none", "delegation"]
STATUSES = ["succeeded", "abstained", "referred", "failed", "suspended"]
CANONS = ["dd-json-document-v1", "json-sorted-utf8-v1", "dd-input-json-v1", "dd-envelope-json-v1"]
CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"

# Strings that exercise repr quoting (6.10), str() conversions and the SQL text paths.
NASTY = [
    "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\there", "nl\nx", "cr\rx", "nul\x00x",
    "del\x7f", "nel\x85", "ls\u2028ps\u2029", "rtl\u200f\u202e", "zw\u200b", "nbsp\xa0", "ideo\u3000",
    "Café – ü", "emoji\U0001F600", "tag\U000E0001", "unassigned\u0378", "private\ue000", "None", "True",
    "0x0xdead", "ümlaut'\"both", "\x1f\x1c", "é\u0301", "", "lone\ud800surrogate",
]
_ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",))  # lone surrogates: see nasty_text
plain_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyz:._-0123456789", min_size=1, max_size=10)
nasty_text = st.one_of(st.sampled_from(NASTY), st.text(alphabet=_ALPHABET, max_size=6))
some_text = st.one_of(plain_text, plain_text, nasty_text)
hex64 = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)


def hexid(n: int):
    return st.integers(0, 16 ** n - 1).map(lambda v: f"{v:0{n}x}")


def uuid7(prefix: int) -> str:
    return f"0199a3c4-{prefix & 0xffff:04x}-7a01-8b23-{prefix:012x}"


# JSON scalars that matter for str()/repr(): ints vs floats (K4), huge ints, -0.0, 1e16 ...
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([2024, 2024.0, -0.0, 0.0, 1e16, 1e-05,
                                                                  0.1, 10 ** 30, 2 ** 63, -(2 ** 64), 1.5e300]),
    some_text)
json_values = st.recursive(json_scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.dictionaries(some_text, kids, max_size=3)), max_leaves=6)


# ----------------------------------------------------------------------------- source copies

RECORDS = [
    {"source_id": "src:a", "text": "Alpha."},
    {"source_id": "src:b", "text": "Beta.", "year": 2024, "score": 1.0},
    {"source_id": "src:ü'q", "text": "Délta “quotes” \u200f and \\ backslash", "tags": ["y", "x"]},
    {"source_id": "src:big", "n": 10 ** 30, "z": -0.0, "e": 1e16},
]
FAIRSHARING = [
    {"fairsharing_id": "FAIRsharing.0001", "name": "ISO 8601", "subjects": ["b", "a", "Ä"], "domains": [],
     "registry": "Standard", "extra": 1},
    {"fairsharing_id": "FAIRsharing.0002", "name": "CSV\u2028", "subjects": [3, 1.0, None, "x"], "status": "ready"},
]
REFS = {"snap:records": RECORDS, "snap:records (stale)": RECORDS, "snap:fair": FAIRSHARING, "None": RECORDS, 5: RECORDS}


def write_sources(directory: Path, *, str_refs: bool = False) -> Path:
    """Write the pinned copies the generated evidence cites; return the sources.yaml path.

    ``str_refs`` adds an entry serving the refs 'None' and 5, which evidence without a
    snapshot_ref (looked up as str(None)) and with snapshot_ref 5 then resolve to (docs/rules.md#source-check, docs/rules.md#s0).
    """
    directory.mkdir(parents=True, exist_ok=True)
    jsonl = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS).encode("utf-8")
    array = json.dumps(FAIRSHARING, indent=2, ensure_ascii=False).encode("utf-8")
    (directory / "records.jsonl").write_bytes(jsonl)
    (directory / "fair.json").write_bytes(array)
    cfg = directory / "sources.yaml"
    cfg.write_text(
        "sources:\n"
        f"  - snapshot_refs: ['snap:records', 'snap:records (stale)']\n    path: records.jsonl\n"
        f"    id_field: source_id\n    sha256: '{hashlib.sha256(jsonl).hexdigest()}'\n"
        f"  - snapshot_refs: ['snap:fair']\n    path: fair.json\n"
        f"    id_field: fairsharing_id\n    sha256: '{hashlib.sha256(array).hexdigest()}'\n"
        + (f"  - snapshot_refs: ['None', 5]\n    path: records.jsonl\n"
           f"    id_field: source_id\n    sha256: '{hashlib.sha256(jsonl).hexdigest()}'\n" if str_refs else ""),
        encoding="utf-8")
    return cfg


# ----------------------------------------------------------------------------- files


@dataclass
class RunFiles:
    name: str
    files: dict  # file name -> bytes (None = file absent)


def dump_envelope(doc) -> bytes:
    return json.dumps(doc, indent=2).encode("utf-8")


def write_archive(runs: list[RunFiles], runs_dir: Path) -> Path:
    """Write runs as ``runs_dir/<name>/<file>``, plus the store's index of envelopes."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    index = []
    for run in runs:
        folder = runs_dir / run.name
        folder.mkdir()
        for name, data in run.files.items():
            if data is not None:
                (folder / name).write_bytes(data)
        try:
            doc = json.loads(run.files["envelope.json"].decode("utf-8"))
            index.append(json.dumps(doc, separators=(",", ":")) + "\n")
        except (ValueError, UnicodeDecodeError, KeyError, AttributeError, RecursionError):
            pass
    (runs_dir / "invocations.jsonl").write_text("".join(index), encoding="utf-8")
    return runs_dir


# ----------------------------------------------------------------------------- spans

T0 = datetime(2026, 11, 30, 2, 6, 6, 110072, tzinfo=timezone.utc)
OFFSETS = [None, None, None, timedelta(0), timedelta(hours=5, minutes=30), -timedelta(hours=3),
           timedelta(hours=14), -timedelta(hours=9, minutes=45)]


def fmt_time(us: int, offset) -> str:
    moment = T0 + timedelta(microseconds=us)
    if offset is None:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    local = moment.astimezone(timezone(offset))
    return local.isoformat(timespec="microseconds")


def span_line(name, trace_id, span_id, parent_id, start, end, attrs, service="agent") -> dict:
    return {
        "name": name,
        "context": {"trace_id": trace_id, "span_id": span_id, "trace_state": "[]"},
        "kind": "SpanKind.INTERNAL",
        "parent_id": parent_id,
        "start_time": start, "end_time": end,
        "status": {"status_code": "UNSET"},
        "attributes": attrs,
        "events": [], "links": [],
        "resource": {"attributes": {"telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry",
                                    "telemetry.sdk.version": "1.45.2", "service.name": service},
                     "schema_url": ""},
    }


@dataclass
class Draft:
    """A run under construction: span dicts (with µs times until rendered) and the envelope."""
    inv: str
    mode: object
    trace: str
    root_id: str
    spans: list
    envelope: dict
    request: dict
    input_hash: str
    next_id: int = 0
    dup_keys: tuple = ()  # (where, how) pairs applied when the envelope is written

    def new_id(self) -> str:
        """A span id no other span of this run has (duplicates only where a perturbation wants them)."""
        self.next_id += 1
        return f"{(self.next_id * 0x9E3779B97F4A7C15 + 0x5bd1e995) % 16 ** 16:016x}"


def _cite(sid, h):
    return {"source_id": sid, "content_hash": h}


@st.composite
def evidence_item(draw, sid, h, canon, content, ref):
    item = {"source_id": sid}
    if ref is not None:
        item["snapshot_ref"] = ref
    item.update({"hash_algorithm": "sha256", "canonicalisation": canon, "content_hash": h})
    if content is not None and draw(st.booleans()):
        item["content"] = content
    return item


@st.composite
def coherent_run(draw, inv: str) -> Draft:
    """A run that passes its mode's rules (before perturbation)."""
    mode = draw(st.sampled_from(MODES))
    trace = draw(hexid(32))
    ids = Draft(inv, None, trace, "", [], {}, {}, "", next_id=draw(st.integers(0, 2 ** 20)))
    root_id = ids.new_id()
    input_doc = {"schema_class": "ProbeClaim", "text": draw(some_text)}
    if draw(st.booleans()):
        input_doc["n"] = draw(json_scalars)
    input_hash = content_hash("dd-input-json-v1", input_doc)
    status = draw(st.sampled_from(STATUSES[:1] * 3 + STATUSES))
    spans = []
    t_policy = draw(st.integers(1, 50))
    spans.append(dict(name="policy_gate", span_id=ids.new_id(), parent=root_id, start=t_policy,
                      end=t_policy + 5, attrs={"dd.operation": "policy_gate", "dd.agent_id": "fake.agent"}))
    grounded, evidence = [], []
    if mode == "retrieval":
        picks = draw(st.lists(st.sampled_from(range(len(RECORDS) + len(FAIRSHARING) + 1)), min_size=0, max_size=3))
        t = 100
        for i in picks:
            if i < len(RECORDS):
                doc, canon, ref = RECORDS[i], draw(st.sampled_from(["dd-json-document-v1", "dd-json-document-v1",
                                                                    "dd-input-json-v1"])), \
                    draw(st.sampled_from(["snap:records", "snap:records (stale)", "live", None]))
                sid = doc["source_id"]
            elif i < len(RECORDS) + len(FAIRSHARING):
                doc, canon, ref = FAIRSHARING[i - len(RECORDS)], "json-sorted-utf8-v1", \
                    draw(st.sampled_from(["snap:fair", "live", None]))
                sid = doc["fairsharing_id"]
            else:  # a record no copy holds
                sid = "src:" + draw(some_text)
                doc, canon, ref = {"source_id": sid, "v": draw(json_values)}, "dd-json-document-v1", \
                    draw(st.sampled_from(["snap:records", "live", None]))
            h = content_hash(canon, doc)
            start = t + draw(st.integers(0, 20))
            t = start + draw(st.integers(0, 10))
            spans.append(dict(name="retrieval", span_id=ids.new_id(), parent=root_id, start=start, end=t,
                              attrs={"dd.operation": "retrieval", "dd.source_id": sid, "dd.content_hash": h}))
            grounded.append(_cite(sid, h))
            projected = projection(canon, doc)
            evidence.append(draw(evidence_item(sid, h, canon, projected, ref)))
        first_end = min((s["end"] for s in spans if s["name"] == "retrieval"), default=100)
        for _ in range(draw(st.integers(0, 2))):
            start = first_end + draw(st.integers(0, 200))
            spans.append(dict(name="chat", span_id=ids.new_id(), parent=root_id, start=start,
                              end=start + draw(st.integers(0, 50)),
                              attrs={"dd.operation": "chat", "dd.model_id": "m", "dd.input_tokens": 3}))
    else:
        inp = _cite("input:" + inv, input_hash)
        grounded.append(inp)
        evidence.append({"source_id": inp["source_id"], "hash_algorithm": "sha256",
                         "canonicalisation": "dd-input-json-v1", "content_hash": input_hash})
        if mode != "none":
            for _ in range(draw(st.integers(0, 2))):
                start = draw(st.integers(60, 400))
                spans.append(dict(name="chat", span_id=ids.new_id(), parent=root_id, start=start,
                                  end=start + 7, attrs={"dd.operation": "chat", "dd.model_id": "m"}))
    if mode != "retrieval" and draw(st.integers(0, 5)) == 0:
        evidence = []  # R3 / D3 territory
    delegations = []
    if mode == "delegation":
        for _ in range(draw(st.integers(0, 3))):
            child = uuid7(draw(st.integers(0, 2 ** 48 - 1)))
            ch = draw(hex64)
            delegations.append({"delegated_invocation_id": child, "delegated_agent_id": "hello.world",
                                "delegated_agent_version": "0", "delegated_status": "succeeded", "content_hash": ch})
            start = draw(st.integers(60, 400))
            spans.append(dict(name="delegate", span_id=ids.new_id(), parent=root_id, start=start, end=start + 9,
                              attrs={"dd.operation": "delegate", "dd.agent_id": "hello.world",
                                     "dd.source_id": "invocation:" + child, "dd.content_hash": ch}))
            cite = _cite("invocation:" + child, ch)
            grounded.append(cite)
            evidence.append({"source_id": cite["source_id"], "retrieved_at": "2026-11-30T02:06:06Z",
                             "hash_algorithm": "sha256", "canonicalisation": "dd-envelope-json-v1",
                             "content_hash": ch})
    root = dict(name="invoke_agent", span_id=root_id, parent=None, start=0, end=1000, root=True,
                attrs={"dd.operation": "invoke_agent", "dd.agent_id": "fake.agent", "dd.grounding_mode": mode,
                       "dd.input_hash": input_hash, "dd.outcome": status})
    spans.insert(draw(st.integers(0, 1)), root)

    envelope = {"invocation_id": inv, "agent_id": "fake.agent", "agent_version": "0",
                "completed_at": "2026-11-30T02:06:07.5Z", "grounding_mode": mode,
                "policy_bundle_ref": "profile:test@v2", "policy_digest": "0" * 64,
                "acting_for": {"principal_id": "https://orcid.org/0000-0002-1825-0097", "name": "J. C.",
                               "principal_kind": "person", "assurance": "asserted"},
                "contract_version": "0.7.0",
                "outcome": {"status": status, "statement": draw(some_text)}}
    if status == "succeeded":
        payload = {"grounded_on": grounded, "schema_class": "ProbeCheck"}
        if len(grounded) > 1 and draw(st.booleans()):  # nested Grounded items
            payload["items"] = [{"grounded_on": [g], "kind": "k"} for g in grounded]
        envelope["payload"] = payload
        envelope["payload_schema"] = "1" * 64
        envelope["evidence"] = evidence
    else:
        envelope["evidence"] = draw(st.sampled_from([[], evidence]))
        if status in ("failed", "suspended"):
            envelope["problem"] = {"type": "https://w3id.org/data-director/problems/agent-error"}
    envelope["telemetry"] = {"trace_id": trace, "energy_method": "not_measured", "energy_estimate_j": None}
    envelope["requires_human_review"] = True
    if delegations:
        envelope["delegations"] = delegations
    request = {"invocation_id": inv, "agent_id": "fake.agent", "requirement_ids": [],
               "issued_at": "2026-11-30T02:06:06.108108Z", "input": input_doc}
    return Draft(inv, mode, trace, root_id, spans, envelope, request, input_hash, next_id=ids.next_id)


# ----------------------------------------------------------------------------- perturbations
# Each takes (draw, draft) and edits it in place. Spans are dicts with keys name, span_id,
# parent, start, end, attrs (+ optional trace, root, raw_parent, drop, offset).


def _agent_spans(d):
    return [s for s in d.spans if not s.get("root")]


def _root(d):
    roots = [s for s in d.spans if s.get("root")]
    return roots[0] if roots else None


def p_mode(draw, d):
    d.envelope["grounding_mode"] = draw(st.sampled_from(
        MODES + ["telepathy", "", None, 0, False, ["none"], {"m": 1}, "Retrieval", 5, "none "]))
    if d.envelope["grounding_mode"] is None and draw(st.booleans()):
        del d.envelope["grounding_mode"]


def p_root_mode(draw, d):
    r = _root(d)
    if r:
        choice = draw(st.sampled_from(MODES + ["missing", 5, None, ["none"]]))
        if choice == "missing":
            r["attrs"].pop("dd.grounding_mode", None)
        else:
            r["attrs"]["dd.grounding_mode"] = choice


def p_input_hash(draw, d):
    r = _root(d)
    if r:
        choice = draw(st.sampled_from(["missing", "wrong", "int"]))
        if choice == "missing":
            r["attrs"].pop("dd.input_hash", None)
        else:
            r["attrs"]["dd.input_hash"] = 7 if choice == "int" else draw(hex64)


def p_roots(draw, d):
    choice = draw(st.sampled_from(["none", "two", "hostile"]))
    if choice == "none":
        d.spans = _agent_spans(d)
    elif choice == "two":
        r = _root(d)
        if r:
            d.spans.append(dict(r, span_id=d.new_id(), attrs=dict(r["attrs"])))
    else:
        d.spans.append(dict(name="invoke_agent", span_id=d.new_id(), parent=d.root_id, start=5, end=6,
                            attrs={}))


def p_foreign_trace(draw, d):
    parent = draw(st.sampled_from([d.root_id, None, "feedfacefeedface"]))
    d.spans.append(dict(name=draw(st.sampled_from(["chat", "retrieval", "x"])), span_id=d.new_id(),
                        parent=parent, start=draw(st.integers(0, 500)), end=600, trace=draw(hexid(32)),
                        attrs={"dd.source_id": "src:a", "dd.content_hash": content_hash("dd-json-document-v1", RECORDS[0])}))


def p_parentless(draw, d):
    d.spans.append(dict(name=draw(st.sampled_from(["chat", "retrieval", "policy_gate"])), span_id=d.new_id(),
                        parent=None, raw_parent=draw(st.sampled_from([None, "", 0, 0.0, False, "missing"])),
                        start=draw(st.integers(0, 500)), end=700, attrs={}))


def p_conductor_keys(draw, d):
    spans = _agent_spans(d)
    if spans:
        s = draw(st.sampled_from(spans))
        for key in draw(st.lists(st.sampled_from(["dd.grounding_mode", "dd.input_hash", "dd.outcome"]), min_size=1)):
            s["attrs"][key] = draw(st.sampled_from(["none", d.input_hash, "succeeded", 1, None]))


def p_nest(draw, d):
    """Move agent spans under other agent spans (nested trees; DFS order of 6.1)."""
    spans = _agent_spans(d)
    if len(spans) >= 2:
        for s in draw(st.lists(st.sampled_from(spans), max_size=3)):
            other = draw(st.sampled_from(spans))
            if s["span_id"] not in _ancestor_ids(d, other):  # keep it acyclic (p_cycle makes cycles)
                s["parent"] = other["span_id"]


def _ancestor_ids(d, span) -> set:
    """span_id of ``span`` and of every span it descends from (by id; copies included)."""
    seen, todo = set(), [span["span_id"]]
    while todo:
        sid = todo.pop()
        if sid in seen:
            continue
        seen.add(sid)
        todo += [s["parent"] for s in d.spans if s["span_id"] == sid and s.get("parent") is not None]
    return seen


def p_duplicate(draw, d):
    spans = _agent_spans(d)
    if spans:
        s = draw(st.sampled_from(spans))
        d.spans.insert(draw(st.integers(0, len(d.spans))), copy.deepcopy(s))
        if draw(st.booleans()):  # a child of the duplicated span: counted once per copy
            start = draw(st.integers(0, 900))
            d.spans.append(dict(name=draw(st.sampled_from(["chat", "retrieval"])), span_id=d.new_id(),
                                parent=s["span_id"], start=start, end=start + 3,
                                attrs={"dd.source_id": "src:a"}))


def p_cycle(draw, d):
    spans = _agent_spans(d)
    if not spans:
        return
    kind = draw(st.sampled_from(["self-copy", "root-parent", "unreachable"]))
    s = draw(st.sampled_from(spans))
    r = _root(d)
    if kind == "self-copy":  # a copy of s under s: hangs upstream (C4 / 6.7)
        d.spans.append(dict(s, parent=s["span_id"], attrs=dict(s["attrs"])))
    elif kind == "root-parent" and r:
        r["parent"] = s["span_id"]
    else:
        a, b = d.new_id(), d.new_id()
        d.spans += [dict(name="x", span_id=a, parent=b, start=1, end=2, attrs={}),
                    dict(name="x", span_id=b, parent=a, start=1, end=2, attrs={})]


def p_span_attrs(draw, d):
    spans = _agent_spans(d)
    if spans:
        s = draw(st.sampled_from(spans))
        key = draw(st.sampled_from(["dd.source_id", "dd.content_hash", "dd.operation", "dd.tool_name", "other"]))
        if draw(st.booleans()):
            s["attrs"].pop(key, None)
        else:
            s["attrs"][key] = draw(json_scalars)
        if draw(st.integers(0, 9)) == 0:
            s["no_attributes"] = True


def p_times(draw, d):
    spans = d.spans
    if not spans:
        return
    retrievals = [s for s in spans if s["name"] == "retrieval"]
    for s in draw(st.lists(st.sampled_from(spans), max_size=3)):
        if s["name"] == "chat" and retrievals:
            first_end = min(r["end"] for r in retrievals)
            s["start"] = first_end + draw(st.sampled_from([-1, 0, 1, -50]))
        else:
            s["start"] = draw(st.integers(0, 900))
            s["end"] = s["start"] + draw(st.integers(0, 30))
    for s in spans:
        s["offset"] = draw(st.sampled_from(OFFSETS))


def p_chat(draw, d):
    r = _root(d)
    start = draw(st.integers(0, 900))
    d.spans.insert(draw(st.integers(0, len(d.spans))),
                   dict(name="chat", span_id=d.new_id(), parent=r["span_id"] if r else d.root_id, start=start,
                        end=start + 4, attrs={"dd.operation": "chat"}))


def p_retrieval(draw, d):
    r = _root(d)
    start = draw(st.integers(0, 900))
    rec = draw(st.sampled_from(RECORDS))
    d.spans.insert(draw(st.integers(0, len(d.spans))),
                   dict(name="retrieval", span_id=d.new_id(), parent=r["span_id"] if r else d.root_id,
                        start=start, end=start + draw(st.integers(0, 4)),
                        attrs={"dd.source_id": rec["source_id"], "dd.content_hash": content_hash("dd-json-document-v1", rec)}))


def p_weird_ids(draw, d):
    spans = d.spans
    if spans:
        s = draw(st.sampled_from(spans))
        new = draw(st.one_of(nasty_text.filter(lambda t: t not in ("", "0x")), st.sampled_from(["0x0xdead", "0X1", "dead"])))
        old = s["span_id"]
        for other in spans:
            if other.get("parent") == old:
                other["parent"] = new
        s["span_id"] = new
        s["no0x"] = draw(st.booleans())  # written without the 0x prefix
        if s.get("root"):
            d.root_id = new
    if draw(st.booleans()):
        names = draw(st.sampled_from(spans)) if spans else None
        if names and not names.get("root"):
            names["name"] = draw(st.one_of(nasty_text, st.sampled_from([5, None, ["chat"], "Chat", "chat "])))


def p_outcome(draw, d):
    choice = draw(st.sampled_from(["missing", None, {}, "", 0, False, {"status": 1}, {"status": "Succeeded"},
                                   "status"] + STATUSES))
    if choice == "missing":
        d.envelope.pop("outcome", None)
    elif isinstance(choice, str) and choice in STATUSES:
        d.envelope["outcome"] = {"status": choice, "statement": "s"}
    else:
        d.envelope["outcome"] = copy.deepcopy(choice)


def p_payload(draw, d):
    payload = d.envelope.get("payload")
    choice = draw(st.sampled_from(["missing", "null", "list", "scalar", "no-schema", "no-grounded", "empty",
                                   "gon-null", "gon-scalar", "malformed", "nested", "deep-list", "gon-in-gon",
                                   "add-to-failed"]))
    good = payload.get("grounded_on") if isinstance(payload, dict) else []
    good = good if isinstance(good, list) else []
    malformed = st.one_of(
        st.just({"source_id": "S"}), st.just({"content_hash": "h"}), st.just({"source_id": 5, "content_hash": "h"}),
        st.just({"source_id": "S", "content_hash": None}), st.just({"source_id": "S", "content_hash": ["h"]}),
        json_values, st.builds(lambda t: {"source_id": t, "content_hash": 1}, nasty_text))
    if choice == "missing":
        d.envelope.pop("payload", None)
    elif choice == "null":
        d.envelope["payload"] = None
    elif choice == "list":
        d.envelope["payload"] = [{"grounded_on": good}, {"x": {"grounded_on": draw(st.lists(malformed, max_size=2))}}]
    elif choice == "scalar":
        d.envelope["payload"] = draw(st.sampled_from(["text", 0, False, 1.5, True]))
    elif choice == "add-to-failed" and payload is None:
        d.envelope["payload"] = {"schema_class": "P", "grounded_on": [_cite("src:a", "x" * 3)]}
    elif isinstance(payload, dict):
        if choice == "no-schema":
            payload.pop("schema_class", None)
        elif choice == "no-grounded":
            payload.pop("grounded_on", None)
            if draw(st.booleans()):
                payload["schema_class"] = draw(json_scalars)
        elif choice == "empty":
            d.envelope["payload"] = {}
        elif choice == "gon-null":
            payload["grounded_on"] = None
        elif choice == "gon-scalar":
            payload["grounded_on"] = draw(st.one_of(json_scalars, st.dictionaries(some_text, json_scalars, max_size=2)))
        elif choice == "malformed":
            gon = list(good)
            gon.insert(draw(st.integers(0, len(gon))), draw(malformed))
            payload["grounded_on"] = gon
        elif choice == "nested":
            payload["items"] = [{"kind": "a", "grounded_on": draw(st.lists(st.one_of(
                st.sampled_from(good) if good else malformed, malformed), max_size=3))}]
        elif choice == "deep-list":
            payload["parts"] = [[{"deep": [{"grounded_on": [_cite(draw(some_text), draw(st.one_of(hex64, some_text)))]}]}],
                                {"grounded_on": None}]
        elif choice == "gon-in-gon":
            payload["grounded_on"] = list(good) + [{"source_id": "s", "content_hash": "h",
                                                    "grounded_on": [{"nested": 1}]}]


def p_evidence(draw, d):
    ev = d.envelope.get("evidence")
    choice = draw(st.sampled_from(["drop", "extra", "field", "field", "content", "canon", "falsy", "reorder", "dupe"]))
    if choice == "falsy":
        value = draw(st.sampled_from(["missing", None, "", {}, [], 0, False]))
        if value == "missing":
            d.envelope.pop("evidence", None)
        else:
            d.envelope["evidence"] = value
        return
    if not isinstance(ev, list):
        return
    if choice == "drop" and ev:
        ev.pop(draw(st.integers(0, len(ev) - 1)))
    elif choice == "extra":
        rec = draw(st.sampled_from(RECORDS + [{"source_id": "src:invented", "t": 1}]))
        canon = draw(st.sampled_from(CANONS))
        ev.append({"source_id": rec["source_id"], "snapshot_ref": draw(st.sampled_from(list(REFS) + ["live", "None"])),
                   "canonicalisation": canon, "content_hash": content_hash(canon, rec), "content": rec})
    elif choice in ("field", "content", "canon") and any(isinstance(e, dict) for e in ev):
        item = draw(st.sampled_from([e for e in ev if isinstance(e, dict)]))
        if choice == "field":
            key = draw(st.sampled_from(["source_id", "content_hash", "snapshot_ref", "canonicalisation"]))
            if draw(st.booleans()):
                item.pop(key, None)
            else:
                item[key] = draw(st.one_of(json_scalars, hex64, st.sampled_from(["input:" + d.inv, "snap:records"])))
        elif choice == "content":
            base = item.get("content")
            options = [json_values, st.sampled_from([None, [], "s", 0, False, {}])]
            if isinstance(base, dict) and base:
                key = draw(st.sampled_from(sorted(base)))
                altered = dict(base)
                altered[key] = draw(st.sampled_from([2024.0, 2024, -0.0, 1e16, 10 ** 30, "Altered", None]))
                options.append(st.just(altered))
                options.append(st.just({**base, "extra": 1}))
            item["content"] = draw(st.one_of(*options))
        else:
            item["canonicalisation"] = draw(st.sampled_from(CANONS + ["md5-of-vibes", None, 1, ["dd-json-document-v1"]]))
    elif choice == "reorder" and len(ev) > 1:
        ev.reverse()
    elif choice == "dupe" and ev:
        ev.append(copy.deepcopy(draw(st.sampled_from(ev))))


def p_delegations(draw, d):
    choice = draw(st.sampled_from(["string", "missing", None, "non-object", "alter", "forge-cite"]))
    dels = d.envelope.get("delegations")
    if choice == "string":
        d.envelope["delegations"] = draw(st.sampled_from(["abc", "", "invocation:x"]))
    elif choice == "missing":
        d.envelope.pop("delegations", None)
    elif choice is None:
        d.envelope["delegations"] = None
    elif choice == "non-object":
        d.envelope["delegations"] = (dels if isinstance(dels, list) else []) + [draw(st.sampled_from(["x", 5, None, []]))]
    elif choice == "alter" and isinstance(dels, list) and dels:
        entry = dels[0]
        key = draw(st.sampled_from(["delegated_invocation_id", "content_hash"]))
        if draw(st.booleans()):
            entry.pop(key, None)
        else:
            entry[key] = draw(st.one_of(hex64, json_scalars))
    elif choice == "forge-cite":
        cite = _cite("invocation:" + uuid7(draw(st.integers(0, 99))), draw(hex64))
        if isinstance(d.envelope.get("payload"), dict) and isinstance(d.envelope["payload"].get("grounded_on"), list):
            d.envelope["payload"]["grounded_on"].append(cite)
        if isinstance(d.envelope.get("evidence"), list):
            d.envelope["evidence"].append(dict(cite, canonicalisation="dd-envelope-json-v1"))


def p_invocation_id(draw, d):
    choice = draw(st.sampled_from(["missing", "other", 5]))
    if choice == "missing":
        d.envelope.pop("invocation_id", None)
    elif choice == "other":
        d.envelope["invocation_id"] = uuid7(draw(st.integers(0, 99)))
    else:
        d.envelope["invocation_id"] = 5


CRASHES = {"outcome": ["outcome-string", "outcome-list", "outcome-scalar"],
           "evidence": ["evidence-element", "evidence-string"],
           "delegations": ["delegations-scalar"]}


def p_crash(draw, d, part=None):
    """Envelope values the workbench linter crashes on where it reads them (reference:
    Unlintable past the early stops; delegations in delegation mode only; docs/rules.md#early-stops);
    ``part``: one of the envelope's (CRASHES), else any."""
    choice = draw(st.sampled_from(CRASHES[part] if part else [c for cs in CRASHES.values() for c in cs]))
    if choice == "evidence-element":
        ev = d.envelope.get("evidence")
        d.envelope["evidence"] = (ev if isinstance(ev, list) else []) + [draw(st.sampled_from(["x", 1, None, [1]]))]
    elif choice == "evidence-string":
        d.envelope["evidence"] = draw(st.sampled_from(["xy", {"a": 1}, 3, True]))
    elif choice == "outcome-string":
        d.envelope["outcome"] = "succeeded"
    elif choice == "outcome-list":
        d.envelope["outcome"] = draw(st.sampled_from([["succeeded"], [1], [{"status": "succeeded"}]]))
    elif choice == "outcome-scalar":
        d.envelope["outcome"] = draw(st.sampled_from([1, True, 2.5]))
    else:
        d.envelope["delegations"] = draw(st.sampled_from([3, True, 1.5, -1]))


def p_early_stop(draw, d):
    """Stop the linter at step 1 (no root, two roots, a hostile root) or step 3 (an invalid
    mode), or not at all, and give the envelope a value it crashes on where it reads it: the
    early stops must give their normal report (C6, docs/rules.md#early-stops)."""
    stop = draw(st.sampled_from(["roots", "mode", "none"]))
    part = draw(st.sampled_from(sorted(CRASHES)))
    if stop == "roots":
        p_roots(draw, d)
    elif stop == "mode":
        d.envelope["grounding_mode"] = draw(st.sampled_from(["telepathy", "", None, 0, ["none"], {"m": 1}, "Delegation"]))
    elif part == "delegations" and draw(st.booleans()):  # read in delegation mode only
        d.envelope["grounding_mode"] = "delegation"
    p_crash(draw, d, part)
    if draw(st.booleans()):
        p_crash(draw, d)


class DupKeys(dict):
    """A JSON object written with repeated keys (json.dumps iterates items()): Python keeps the
    first key's position and the last key's value."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.pairs = pairs

    def items(self):
        return list(self.pairs)


def p_dup_keys(draw, d):
    d.dup_keys += ((draw(st.sampled_from(["payload", "evidence", "outcome", "payload-ref"])),
                    draw(st.sampled_from(["before", "after"])), draw(json_values)),)


def _with_dup(obj, how, junk):
    if not isinstance(obj, dict) or not obj:
        return obj
    pairs = list(obj.items())
    key = pairs[-1][0] if how == "before" else pairs[0][0]
    return DupKeys([(key, junk)] + pairs if how == "before" else pairs + [(key, junk)])


def apply_dup_keys(d) -> dict:
    env = copy.deepcopy(d.envelope)
    for where, how, junk in d.dup_keys:
        if where == "payload":
            env["payload"] = _with_dup(env.get("payload"), how, junk)
        elif where == "outcome":
            env["outcome"] = _with_dup(env.get("outcome"), how, junk)
        elif where == "evidence" and isinstance(env.get("evidence"), list) and env["evidence"]:
            env["evidence"][0] = _with_dup(env["evidence"][0], how, junk)
        elif where == "payload-ref" and isinstance(env.get("payload"), dict):
            gon = env["payload"].get("grounded_on")
            if isinstance(gon, list) and gon:
                gon[0] = _with_dup(gon[0], how, junk)
    return env


PERTURBATIONS = [p_dup_keys, p_mode, p_root_mode, p_input_hash, p_roots, p_foreign_trace, p_parentless, p_conductor_keys,
                 p_nest, p_duplicate, p_cycle, p_span_attrs, p_times, p_chat, p_retrieval, p_weird_ids, p_outcome,
                 p_payload, p_payload, p_evidence, p_evidence, p_delegations, p_invocation_id, p_crash]
# (p_early_stop is given last to every run of archives(early_stops=True))
# weights: crashes and cycles are rarer so that most runs get a verdict
_WEIGHTED = [p for p in PERTURBATIONS for _ in range(1 if p in (p_crash, p_cycle) else 3)]


# ----------------------------------------------------------------------------- rendering


def render_spans(draw, d: Draft) -> bytes:
    lines = []
    for s in d.spans:
        trace = s.get("trace", d.trace)
        if "raw_parent" in s and s["raw_parent"] != "missing":
            parent = s["raw_parent"]
        else:
            parent = None if s.get("parent") is None else "0x" + s["parent"]
        offset = s.get("offset")
        doc = span_line(s["name"], "0x" + trace, ("" if s.get("no0x") else "0x") + s["span_id"], parent, fmt_time(s["start"], offset),
                        fmt_time(s["end"], offset), s["attrs"])
        if s.get("raw_parent") == "missing":
            del doc["parent_id"]
        if s.get("no_attributes"):
            del doc["attributes"]
        lines.append(json.dumps(doc))
    style = draw(st.sampled_from(["lf"] * 8 + ["crlf", "blank-lines", "no-final-newline", "raw-utf8", "broken"]))
    if style == "broken" and lines:  # the workbench's reader crashes (reference: Unlintable)
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["drop-key", "garbage", "span-id-int", "naive-time", "not-object"]))
        doc = json.loads(lines[i])
        if how == "drop-key":
            key = draw(st.sampled_from(["name", "context", "start_time", "end_time", "span_id", "trace_id"]))
            (doc["context"] if key in ("span_id", "trace_id") else doc).pop(key)
            lines[i] = json.dumps(doc)
        elif how == "garbage":
            lines[i] = lines[i][: draw(st.integers(1, len(lines[i]) - 1))]
        elif how == "span-id-int":
            doc["context"]["span_id"] = 12
            lines[i] = json.dumps(doc)
        elif how == "naive-time":
            doc["start_time"] = doc["start_time"][:26]
            lines[i] = json.dumps(doc)
        else:
            lines[i] = json.dumps([doc])
    if style == "crlf":
        return ("".join(line + "\r\n" for line in lines)).encode("utf-8")
    if style == "blank-lines":
        blanks = st.sampled_from(["", " ", "\t", "  \t ", "\x1f", "\u3000", "\xa0"])
        out = []
        for line in lines:
            if draw(st.booleans()):
                out.append(draw(blanks))
            out.append(line)
        return ("\n".join(out) + "\n").encode("utf-8")
    if style == "no-final-newline":
        return "\n".join(lines).encode("utf-8")
    if style == "raw-utf8":  # non-ASCII written raw; a raw U+2028/U+0085 then splits the line (K5)
        return "".join(json.dumps(json.loads(line), ensure_ascii=False) + "\n" for line in lines).encode(
            "utf-8", errors="surrogatepass")
    return ("".join(line + "\n" for line in lines)).encode("utf-8")


def render_envelope(draw, d: Draft) -> bytes:
    text = json.dumps(apply_dup_keys(d) if d.dup_keys else d.envelope, indent=2)
    style = draw(st.sampled_from(["plain"] * 30 + ["dup-key", "bom"]))
    if style == "dup-key" and '\n  "grounding_mode": ' in text:
        # duplicate keys: the last value wins, at the first key's position (Python json)
        text = text.replace('\n  "grounding_mode": ', '\n  "grounding_mode": "telepathy",\n  "grounding_mode": ', 1)
    elif style == "bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    return text.encode("utf-8")


@st.composite
def generated_run(draw, inv: str, early_stop: bool = False) -> RunFiles:
    """A coherent run with up to three perturbations; with ``early_stop``, p_early_stop comes
    last (so no other perturbation undoes its stop or its unreadable value)."""
    d = draw(coherent_run(inv))
    for perturb in draw(st.lists(st.sampled_from(_WEIGHTED), max_size=2 if early_stop else 3)):
        perturb(draw, d)
    if early_stop:
        p_early_stop(draw, d)
    files = {"spans.jsonl": render_spans(draw, d), "envelope.json": render_envelope(draw, d),
             "request.json": dump_envelope(d.request)}
    return RunFiles(inv, files)


# ----------------------------------------------------------------------------- corpus mutations


def corpus_runs() -> list[Path]:
    return sorted(p for p in (CORPUS / "runs").iterdir() if p.is_dir())


@st.composite
def corpus_mutation(draw, inv: str) -> RunFiles:
    """A real corpus run (the envelope the workbench judged), copied and perturbed in one field."""
    src = draw(st.sampled_from(corpus_runs()))
    spans = [json.loads(line) for line in (src / "spans.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    stored = src / "envelope.withheld.json"  # the real-store form of a withheld run
    env_file = stored if stored.exists() and draw(st.booleans()) else src / "envelope.json"
    env = json.loads(env_file.read_text(encoding="utf-8"))
    request = json.loads((src / "request.json").read_text(encoding="utf-8"))
    kind = draw(st.sampled_from(["none", "span-field", "span-drop", "span-dup", "env-field", "evidence-field",
                                 "payload-ref", "time"]))
    if kind == "span-field" and spans:
        s = draw(st.sampled_from(spans))
        key = draw(st.sampled_from(["name", "parent_id", "attributes", "trace_id"]))
        if key == "name":
            s["name"] = draw(st.sampled_from(["chat", "retrieval", "invoke_agent", "x", "Chat"]))
        elif key == "parent_id":
            s["parent_id"] = draw(st.sampled_from([None, 0, "", "0x" + "f" * 16] + [t["context"]["span_id"] for t in spans]))
        elif key == "trace_id":
            s["context"]["trace_id"] = "0x" + draw(hexid(32))
        else:
            attr = draw(st.sampled_from(["dd.grounding_mode", "dd.input_hash", "dd.source_id", "dd.content_hash"]))
            s["attributes"][attr] = draw(st.one_of(json_scalars, st.sampled_from(MODES)))
    elif kind == "span-drop" and spans:
        spans.pop(draw(st.integers(0, len(spans) - 1)))
    elif kind == "span-dup" and spans:
        spans.append(copy.deepcopy(draw(st.sampled_from(spans))))
    elif kind == "env-field":
        key = draw(st.sampled_from(["grounding_mode", "invocation_id", "outcome", "payload", "delegations"]))
        env[key] = draw(st.one_of(json_scalars, st.sampled_from(MODES), st.just({"status": "succeeded"})))
    elif kind == "evidence-field" and isinstance(env.get("evidence"), list) and env["evidence"]:
        item = draw(st.sampled_from(env["evidence"]))
        key = draw(st.sampled_from(["source_id", "content_hash", "canonicalisation", "content", "snapshot_ref"]))
        item[key] = draw(st.one_of(json_scalars, st.sampled_from(CANONS + ["snapshot:corpus-records-v1"])))
    elif kind == "payload-ref" and isinstance(env.get("payload"), dict):
        gon = env["payload"].get("grounded_on")
        if isinstance(gon, list) and gon and isinstance(gon[0], dict):
            gon[0][draw(st.sampled_from(["source_id", "content_hash"]))] = draw(st.one_of(some_text, json_scalars))
    elif kind == "time" and spans:
        s = draw(st.sampled_from(spans))
        moment = datetime.fromisoformat(s["start_time"].replace("Z", "+00:00"))
        moment += timedelta(microseconds=draw(st.integers(-5000, 5000)))
        s["start_time"] = moment.astimezone(timezone(draw(st.sampled_from(OFFSETS[3:])))).isoformat(timespec="microseconds")
    text = "".join(json.dumps(s) + "\n" for s in spans).encode("utf-8")
    return RunFiles(inv, {"spans.jsonl": text, "envelope.json": dump_envelope(env),
                          "request.json": dump_envelope(request)})


@st.composite
def byte_mutation(draw, inv: str) -> RunFiles:
    """A run whose spans.jsonl or envelope.json had a few bytes changed: mostly a digit (valid
    JSON, different times / ids / hashes / years), sometimes any byte (invalid UTF-8 or JSON)."""
    run = draw(st.one_of(generated_run(inv), corpus_mutation(inv)))
    name = draw(st.sampled_from(["spans.jsonl", "envelope.json"]))
    data = bytearray(run.files[name])
    for _ in range(draw(st.integers(1, 3))):
        if not data:
            break
        op = draw(st.sampled_from(["digit"] * 4 + ["byte", "insert", "delete"]))
        pos = draw(st.integers(0, len(data) - 1))
        if op == "digit":
            digits = [i for i, b in enumerate(data) if 48 <= b <= 57]
            if digits:
                data[digits[pos % len(digits)]] = draw(st.integers(48, 57))
        elif op == "byte":
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from([b" ", b"\n", b"\r", b",", b"\"", b"\x85", b"\xe2\x80\xa8", b"\x00"]))
        else:
            del data[pos]
    return RunFiles(inv, dict(run.files, **{name: bytes(data)}))


# ----------------------------------------------------------------------------- batches


@st.composite
def archives(draw, min_runs: int = 1, max_runs: int = 25, hostile_bytes: bool = False,
             early_stops: bool = False) -> list[RunFiles]:
    """A batch of run folders with distinct names, mixing generated runs and corpus mutations
    (and, with ``hostile_bytes``, byte-level mutations of either). With ``early_stops`` every run
    is a generated run given p_early_stop last: stopped at step 1 or 3, or not, over an envelope
    value the linter crashes on where it reads it (docs/rules.md#early-stops)."""
    n = draw(st.integers(min_runs, max_runs))
    runs = []
    for i in range(n):
        inv = uuid7(i)
        if early_stops:
            runs.append(draw(generated_run(inv, early_stop=True)))
            continue
        kinds = [generated_run(inv), generated_run(inv), corpus_mutation(inv)]
        if hostile_bytes:
            kinds.append(byte_mutation(inv))
        runs.append(draw(st.one_of(*kinds)))
    return runs
