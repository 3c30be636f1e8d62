"""One synthetic run: its spans, request, envelope (as returned and as stored) and its truth.

A scenario builds a `Run` step by step. Every element it adds carries, by construction, the
verdict it causes: a retrieval span counts as a retrieval, an evidence item knows whether the
source check verifies it, leaves it unresolved or fails it, a grounding reference knows which
mode rules it breaks, a span knows whether it sits outside the tree. `finish()` then formats the
workbench's exact messages from those injected values (the message texts of docs/rules.md#rules), applies
the conductor's withholding (docs/rules.md#withheld-envelopes) and produces the files' bytes and the ground-truth line.
Nothing here runs a linter.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field

import orjson

from groundwork.core.canonical import content_hash
from groundwork.core.pyrepr import pyrepr

from groundwork.synth.pools import (AGENTS, CONTRACT, POLICY_DIGEST, POLICY_REF, PROBLEM_BASE, Agent, pools)

ELL = "\u2026"
MODE_RULES = {
    "retrieval": ("G1", "G2", "G3", "G4"),
    "input_only": ("R1", "R2", "R3"),
    "none": ("R1", "R2", "R3", "N1"),
    "delegation": ("R1", "D1", "D2", "G4", "D3"),
}
VALID_MODES = tuple(MODE_RULES)
# Violations that only look at spans (and the envelope's mode): they survive withholding.
SURVIVES = {"tree", "roots", "rootmode", "G1", "R1", "N1"}
_REG = "['dd-envelope-json-v1', 'dd-input-json-v1', 'dd-json-document-v1', 'json-sorted-utf8-v1']"


def h12(h) -> str:
    return str(h)[:12]


def rp(v) -> str:
    """Python repr of a parsed JSON value (builtin repr is exact for ASCII strings)."""
    if isinstance(v, str) and v.isascii():
        return repr(v)
    return pyrepr(v)


# ---------------------------------------------------------------------------------------------
# Serialisation (byte-exact with the workbench's json.dumps calls)
# ---------------------------------------------------------------------------------------------

def _ascii(b: bytes, fallback) -> bytes:
    """Turn orjson's raw-UTF-8 output into Python's ensure_ascii form.

    backslashreplace writes \\xNN / \\uNNNN (lowercase); \\xNN becomes \\u00NN. That is exact as long as
    the text holds no literal backslash (so every \\x is ours), no astral character (Python writes a
    surrogate pair) and no DEL (Python escapes it); otherwise use the stdlib serialiser.
    """
    if b.isascii():
        return b if b"\x7f" not in b else fallback()
    if b"\\\\" in b or b"\x7f" in b:   # an escaped literal backslash
        return fallback()
    e = b.decode("utf-8").encode("ascii", "backslashreplace")
    if b"\\U" in e:
        return fallback()
    return e.replace(b"\\x", b"\\u00")


def dumps_indent(doc) -> bytes:
    """json.dumps(doc, indent=2) (ASCII-escaped): orjson writes the same structure."""
    return _ascii(orjson.dumps(doc, option=orjson.OPT_INDENT_2),
                  lambda: json.dumps(doc, indent=2).encode("ascii"))


def dumps_compact(doc) -> bytes:
    """json.dumps(doc, separators=(",", ":")) (ASCII-escaped)."""
    return _ascii(orjson.dumps(doc), lambda: json.dumps(doc, separators=(",", ":")).encode("ascii"))


_SEC_CACHE: dict[int, str] = {}


def ts(us: int) -> str:
    """Span time: always 6 fractional digits and Z."""
    s, f = divmod(us, 1_000_000)
    p = _SEC_CACHE.get(s)
    if p is None:
        p = _SEC_CACHE[s] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s))
    return f"{p}.{f:06d}Z"


def ts_env(us: int) -> str:
    """Envelope date-time (pydantic): fraction omitted when the microseconds are zero."""
    if us % 1_000_000 == 0:
        return ts(us)[:-8] + "Z"
    return ts(us)


def uuid7(ms: int, rnd: int) -> str:
    h = f"{ms & 0xFFFFFFFFFFFF:012x}"
    a = rnd & 0xFFF
    b = 0x8000 | ((rnd >> 12) & 0x3FFF)
    c = (rnd >> 26) & 0xFFFFFFFFFFFF
    return f"{h[:8]}-{h[8:12]}-7{a:03x}-{b:04x}-{c:012x}"


# ---------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------

@dataclass
class Span:
    name: str
    trace: str
    sid: str
    parent: object            # hex id, None, or a raw falsy JSON value (docs/rules.md#span-records)
    start: object             # int microseconds, or a raw time string
    end: object
    attrs: dict
    service: str
    links: list = field(default_factory=list)
    tree: str = ""            # "", "foreign", "orphan": the G0 tree message this span causes
    sets: tuple = ()          # conductor keys it (illegitimately) carries
    counted: bool = True      # reached from the root (counts for retrieval/chat)
    early: bool = False       # a chat starting before the first retrieval ended (G1)
    drop: tuple = ()          # keys to drop from the line (unlintable variants)


@dataclass
class Ref:
    sid: object
    chash: object
    tags: set = field(default_factory=set)     # rules this reference breaks: G2 G4 R2 D1
    raw: object = None                         # a malformed element (G0) when not None


@dataclass
class Ev:
    item: dict
    tags: set = field(default_factory=set)     # G3 R2 D2 E1hash E1canon E1obj
    src: tuple = ("skip",)                     # verified | unresolved txt | S1 | S2canon err | S2hash actual | skip


class Run:
    """One run under construction (see module docstring)."""

    def __init__(self, ctx, key: str, t0: int, scenario: str, origin: str = "conductor"):
        self.ctx = ctx
        rng = ctx.rng
        self.key = key
        self.agent: Agent = AGENTS[key]
        self.scenario = scenario
        self.origin = origin
        self.t0 = t0
        self.iid = uuid7(t0 // 1000, rng.getrandbits(74))
        self.trace = f"{rng.getrandbits(128):032x}"
        self.root_sid = f"{rng.getrandbits(64):016x}"
        self.mode = self.agent.mode                # declared in the envelope (tampering may change)
        self.input_doc, self.input_hash = rng.choice(pools().inputs[key])
        self.principal = ctx.principal
        self.conversation_id = ctx.conversation_id
        self.parent_iid = None
        self.parent_link = None                    # (trace, span id) of the parent's delegate span
        self.status = "succeeded"
        self.statement = "Done."
        self.reason_code = None
        self.referred_to = None
        self.problem = None
        self.input_accepted = True
        self.has_payload = True
        self.payload_fields: dict = {}
        self.refs: list[Ref] = []                  # root grounded_on
        self.items_key = None                      # "items" / "findings"
        self.items: list[tuple[dict, list[Ref]]] = []
        self.payload_override = None               # tampered payload shapes
        self.payload_g0: list[str] = []            # step-5 payload shape messages
        self.evidence: list[Ev] = []
        self.evidence_override = None              # raw evidence value (tampered)
        self.delegations: list[dict] = []
        self.delegations_override = None
        self.spans: list[Span] = []                # agent spans, in file (end) order
        self.in_process = False
        self.cur = t0 + 2400
        self.model_id = None
        self.tokens = [0, 0]
        self.root_attr_edit: dict = {}             # tampered root attributes (value None = drop)
        self.root_parent = None
        self.roots_found = 1
        self.extra_roots: list[Span] = []
        self.rootmode_msg = None
        self.mode_invalid_msg = None
        self.d3 = False
        self.findings: list[str] = []
        self.unlintable = None
        self.unverifiable = None
        self.tampered = origin == "tampered-copy"
        self.envelope_edit = None                  # callable(doc) applied to the stored document
        self.write_folder = True
        self.stored_edit = None                    # callable(doc) applied after the index line (GW3)
        self.policy_refused = False
        self.input_iid = self.iid                  # str(envelope invocation_id) for the input pair
        self.omit_root = False
        self.root_end = 0
        self.env_hash = None
        self.stored_status = None

    # -- spans --------------------------------------------------------------------------------
    def _span(self, name, start, end, attrs, **kw) -> Span:
        sp = Span(name, kw.pop("trace", self.trace), f"{self.ctx.rng.getrandbits(64):016x}",
                  kw.pop("parent", self.root_sid), start, end, attrs,
                  kw.pop("service", self.agent.agent_id), **kw)
        self.spans.append(sp)
        return sp

    def retrieval(self, sid, chash, **kw) -> Span:
        s = self.cur
        self.cur += 31
        attrs = {"dd.operation": "retrieval", "dd.source_id": sid, "dd.content_hash": chash}
        attrs.update(kw.pop("attrs", {}))
        return self._span("retrieval", s, s + 9, attrs, **kw)

    def chat(self, start=None, dur=None, **kw) -> Span:
        rng = self.ctx.rng
        s = self.cur + 120 if start is None else start
        d = rng.randint(900, 40000) if dur is None else dur
        self.cur = max(self.cur, s + d + 40)
        self.model_id = self.model_id or rng.choice(("claude-opus-5", "claude-sonnet-5"))
        it, ot = rng.randint(200, 3000), rng.randint(40, 600)
        self.tokens[0] += it
        self.tokens[1] += ot
        attrs = {"dd.operation": "chat", "dd.model_id": self.model_id, "dd.input_tokens": it,
                 "dd.output_tokens": ot}
        attrs.update(kw.pop("attrs", {}))
        return self._span("chat", s, s + d, attrs, **kw)

    # -- citations ----------------------------------------------------------------------------
    def input_pair(self):
        return (f"input:{self.iid}", self.input_hash)

    def input_evidence(self, tags=(), src=("skip",), sid=None, chash=None) -> Ev:
        ev = Ev({"source_id": sid or f"input:{self.iid}", "hash_algorithm": "sha256",
                 "canonicalisation": "dd-input-json-v1",
                 "content_hash": chash or self.input_hash}, set(tags), src)
        self.evidence.append(ev)
        return ev

    def record_evidence(self, rec, ref, *, content=True, tags=(), src=None, **over) -> Ev:
        item = {"source_id": rec.sid}
        if rec.uri:
            item["source_uri"] = rec.uri
        item["retrieved_at"] = ts_env(self.cur - 5)
        if ref is not None:
            item["snapshot_ref"] = ref
        item["hash_algorithm"] = "sha256"
        item["canonicalisation"] = rec.canon
        item["content_hash"] = rec.chash
        if content and rec.content is not None:
            item["content"] = rec.content
        item.update(over)
        if src is None:
            src = ("verified",) if ref in self.ctx.pinned else ("unresolved", f"{item['source_id']} ({ref})")
        ev = Ev(item, set(tags), src)
        self.evidence.append(ev)
        return ev

    # -- finishing ----------------------------------------------------------------------------
    def grounded(self) -> list[Ref]:
        """Well-formed references in discovery order (docs/rules.md#grounded-references), with multiplicity."""
        out = [r for r in self.refs if r.raw is None]
        for _, refs in self.items:
            out.extend(r for r in refs if r.raw is None)
        return out

    def payload_doc(self):
        if self.payload_override is not None:
            return self.payload_override[0]
        if not self.has_payload:
            return None
        doc = {"grounded_on": [self._ref_doc(r) for r in self.refs],
               "schema_class": self.agent.payload_class}
        doc.update(self.payload_fields)
        if self.items_key:
            lst = []
            for fields, refs in self.items:
                d = {"grounded_on": [self._ref_doc(r) for r in refs]}
                d.update(fields)
                lst.append(d)
            doc[self.items_key] = lst
        return doc

    @staticmethod
    def _ref_doc(r: Ref):
        if r.raw is not None:
            return r.raw
        return {"source_id": r.sid, "content_hash": r.chash}


# ---------------------------------------------------------------------------------------------
# Texts
# ---------------------------------------------------------------------------------------------

def lint_summary(passed: bool, mode, violations, rc, cc) -> str:
    label = mode if mode else "unknown mode"
    if passed:
        return f"grounding: passed [{label}] ({rc} retrieval, {cc} chat spans)"
    return f"grounding: FAILED [{label}]" + "".join(f"\n  - {v}" for v in violations)


def sources_summary(verified: int, unresolved, violations) -> str:
    s = f"sources: {verified} verified, {len(unresolved)} unresolved"
    if unresolved:
        s += " (no independent copy: " + ", ".join(unresolved) + ")"
    if violations:
        s += "; FAILED" + "".join(f"\n  - {v}" for v in violations)
    return s


def unknown_canon(name) -> str:
    return f"unknown canonicalisation {pyrepr(name if isinstance(name, str) else pyrepr(name))}; registered: {_REG}"


@dataclass
class Built:
    iid: str
    files: dict            # file name -> bytes (empty when the folder is not written)
    index_line: bytes
    truth: dict | None


def _codes(msgs):
    return [m.split(":", 1)[0] for m in msgs]


def _finish(self: Run, need_hash: bool = False) -> Built:
    ctx = self.ctx
    rng = ctx.rng
    root_start = self.t0 + 400
    root_end = self.root_end = self.cur + rng.randint(300, 1500)
    completed = root_end - rng.randint(40, 120)

    # ---- expected lint of the envelope as the agent returned it -------------------------
    declared = self.mode
    label = (declared if isinstance(declared, str) else rp(declared)) if declared else None
    counted = [s for s in self.spans if s.counted]
    rc = sum(1 for s in counted if s.name == "retrieval")
    cc = sum(1 for s in counted if s.name == "chat")
    grounded = self.grounded()
    ev_pairs = [] if self.evidence_override is not None else self.evidence
    viol: list[tuple[str, str]] = []           # (tag, message) in report order
    if self.roots_found != 1:
        viol = [("roots", f"G0: expected exactly one invoke_agent span, found {self.roots_found}")]
        rc = cc = 0
        mode_out = label
    elif not isinstance(declared, str) or declared not in VALID_MODES:
        viol = [("mode", f"G0: envelope declares no valid grounding_mode ({rp(declared)})")]
        mode_out = label
    else:
        mode_out = declared
        for s in self.spans:                   # step 2, file order (conductor spans are clean)
            if s.tree == "foreign":
                viol.append(("tree", f"G0: span {rp(s.name)} ({s.sid}) is in trace {s.trace}, "
                                     f"not the invocation's trace {self.trace}"))
            elif s.tree == "orphan":
                viol.append(("tree", f"G0: span {rp(s.name)} ({s.sid}) does not descend from invoke_agent"))
            if s.sets:
                viol.append(("tree", f"G0: span {rp(s.name)} ({s.sid}) sets {', '.join(s.sets)}, "
                                     "which only the conductor's invoke_agent span may carry"))
        if self.rootmode_msg:
            viol.append(("rootmode", self.rootmode_msg))
        for m in self.payload_g0:
            viol.append(("payload", m))
        for r in self.refs + [r for _, refs in self.items for r in refs]:
            if r.raw is not None:
                viol.append(("payload", f"G0: malformed grounding reference {rp(r.raw)}"))
        for ev in ev_pairs:
            it = ev.item
            sid_raw = it.get("source_id")
            if "E1obj" in ev.tags:
                viol.append(("E1", f"E1: evidence {rp(sid_raw)} content is not an object"))
            elif "E1canon" in ev.tags:
                viol.append(("E1", f"E1: evidence {rp(sid_raw)}: {unknown_canon(it.get('canonicalisation'))}"))
            elif "E1hash" in ev.tags:
                viol.append(("E1", f"E1: evidence {rp(sid_raw)} content does not hash to its content_hash "
                                   f"({h12(it.get('content_hash'))}{ELL}) under {rp(it.get('canonicalisation'))}"))
        succeeded = self.status == "succeeded"
        in_sid = f"input:{self.input_iid}"
        in_hash = self.root_attr_edit.get("dd.input_hash", self.input_hash)
        for rule in MODE_RULES[declared]:
            if rule == "G1":
                if cc and not rc:
                    viol.append(("G1", "G1: a chat span exists but no retrieval span does"))
                else:
                    viol.extend(("G1", f"G1: chat span {s.sid} started before the first retrieval span ended")
                                for s in counted if s.name == "chat" and s.early)
            elif rule == "G2":
                viol.extend(("G2", f"G2: payload rests on {rp(r.sid)} ({h12(r.chash)}{ELL}) which was not "
                                   "retrieved in this invocation") for r in grounded if "G2" in r.tags)
                if succeeded and self.payload_doc() is not None and not grounded:
                    viol.append(("G2", "G2: a succeeded retrieval-mode payload rests on nothing"))
            elif rule == "G3":
                viol.extend(("G3", f"G3: evidence {rp(str(ev.item.get('source_id')))} hash "
                                   f"{h12(ev.item.get('content_hash'))}{ELL} not in trace")
                            for ev in ev_pairs if "G3" in ev.tags)
            elif rule == "G4":
                viol.extend(("G4", f"G4: payload rests on {rp(r.sid)} ({h12(r.chash)}{ELL}) absent from evidence")
                            for r in grounded if "G4" in r.tags)
            elif rule == "R1":
                if rc:
                    viol.append(("R1", f"R1: {rc} retrieval span(s) in an agent that declared none"))
            elif rule == "R2":
                tail = f"; an input-grounded agent may cite only {rp(in_sid)} ({h12(in_hash)}{ELL})"
                viol.extend(("R2", f"R2: payload cites {rp(r.sid)} ({h12(r.chash)}{ELL}){tail}")
                            for r in grounded if "R2" in r.tags)
                viol.extend(("R2", f"R2: evidence cites {rp(str(ev.item.get('source_id')))} "
                                   f"({h12(ev.item.get('content_hash'))}{ELL}){tail}")
                            for ev in ev_pairs if "R2" in ev.tags)
            elif rule == "R3":
                if succeeded and not ev_pairs:
                    viol.append(("R3", "R3: a succeeded input-grounded envelope cites no evidence"))
            elif rule == "N1":
                if cc:
                    viol.append(("N1", f"N1: {cc} chat span(s) in an agent that declared no model call"))
            elif rule == "D1":
                viol.extend(("D1", f"D1: payload rests on {rp(r.sid)} ({h12(r.chash)}{ELL}), which is neither "
                                   "the input nor a delegation recorded by the conductor")
                            for r in grounded if "D1" in r.tags)
            elif rule == "D2":
                viol.extend(("D2", f"D2: evidence {rp(str(ev.item.get('source_id')))} "
                                   f"({h12(ev.item.get('content_hash'))}{ELL}) is neither the input nor a "
                                   "delegation recorded by the conductor") for ev in ev_pairs if "D2" in ev.tags)
            elif rule == "D3":
                if succeeded and self.d3:
                    viol.append(("D3", "D3: a succeeded delegation envelope does not cite its input in evidence"))
    msgs = [m for _, m in viol]
    passed = not msgs
    orig_lint = lint_summary(passed, mode_out, msgs, rc, cc)

    # ---- expected source check -----------------------------------------------------------
    verified, unresolved, smsgs = 0, [], []
    for ev in ev_pairs:
        kind = ev.src[0]
        it = ev.item
        sid = str(it.get("source_id"))
        if kind == "verified":
            verified += 1
        elif kind == "unresolved":
            unresolved.append(ev.src[1])
        elif kind == "S1":
            smsgs.append(f"S1: evidence cites {rp(sid)}, which {rp(it.get('snapshot_ref'))} does not hold")
        elif kind == "S2canon":
            smsgs.append(f"S2: evidence {rp(sid)}: {unknown_canon(it.get('canonicalisation'))}")
        elif kind == "S2hash":
            smsgs.append(f"S2: evidence {rp(sid)} hash {h12(it.get('content_hash'))}{ELL} does not match "
                         f"{rp(it.get('snapshot_ref'))}, where the record hashes to {h12(ev.src[1])}{ELL}")
    orig_src = sources_summary(verified, unresolved, smsgs)

    # ---- the envelope as returned, and as stored -------------------------------------------
    withheld = (not self.tampered and self.status == "succeeded" and bool(msgs or smsgs))
    env = _envelope(self, completed, withheld, msgs, smsgs)
    if self.envelope_edit is not None:
        self.envelope_edit(env)
    env_bytes = dumps_indent(env)
    index_line = dumps_compact(env) + b"\n"
    self.env_hash = content_hash("dd-envelope-json-v1", env) if need_hash else None
    self.stored_status = env.get("outcome", {}).get("status") if isinstance(env.get("outcome"), dict) else None
    if self.stored_edit is not None:           # edited on disk after the store wrote it (GW3)
        self.stored_edit(env)
        env_bytes = dumps_indent(env)

    # ---- expected re-lint of the stored files ----------------------------------------------
    if withheld:
        s_msgs = [m for t, m in viol if t in SURVIVES]
        s_verified, s_unres, s_smsgs = 0, [], []
    else:
        s_msgs, s_verified, s_unres, s_smsgs = msgs, verified, unresolved, smsgs
    s_passed = not s_msgs
    lint = {"status": "passed" if s_passed else "failed", "passed": s_passed, "mode": mode_out,
            "violations": s_msgs, "codes": _codes(s_msgs), "retrieval_count": rc, "chat_count": cc,
            "summary": lint_summary(s_passed, mode_out, s_msgs, rc, cc), "reason": None}
    if self.unlintable:
        lint = {"status": "unlintable", "passed": False, "mode": None, "violations": [], "codes": [],
                "retrieval_count": None, "chat_count": None, "summary": None, "reason": self.unlintable}
    src = {"status": "passed" if not s_smsgs else "failed", "passed": not s_smsgs, "verified": s_verified,
           "unresolved": s_unres, "violations": s_smsgs, "codes": _codes(s_smsgs),
           "summary": sources_summary(s_verified, s_unres, s_smsgs), "reason": None}
    if self.unverifiable:
        src = {"status": "unverifiable", "passed": False, "verified": None, "unresolved": [], "violations": [],
               "codes": [], "summary": None, "reason": self.unverifiable}

    # ---- files ------------------------------------------------------------------------------
    spans_bytes = _spans_bytes(self, root_start, root_end)
    req = {"invocation_id": self.iid, "agent_id": self.agent.agent_id, "requirement_ids": [],
           "issued_at": ts_env(self.t0)}
    if self.conversation_id:
        req["conversation_id"] = self.conversation_id
    if self.parent_iid:
        req["parent_invocation_id"] = self.parent_iid
    req["input"] = self.input_doc
    grounding_txt = (orig_lint + "\n").encode("utf-8")
    sources_txt = (orig_src + "\n").encode("utf-8")
    files = {}
    if self.write_folder:
        files = {"envelope.json": env_bytes, "request.json": dumps_indent(req), "spans.jsonl": spans_bytes,
                 "grounding.txt": grounding_txt, "sources.txt": sources_txt}
    truth = None
    if self.write_folder:
        truth = {"invocation_id": self.iid, "scenario": self.scenario, "origin": self.origin,
                 "agent_id": self.agent.agent_id, "mode": declared if isinstance(declared, (str, type(None))) else label,
                 "parent_invocation_id": self.parent_iid, "outcome_status": self.status,
                 "stored_outcome_status": self.stored_status, "withheld": withheld,
                 "grounding_txt": orig_lint + "\n", "sources_txt": orig_src + "\n",
                 "recorded_matches_relint": lint["summary"] == orig_lint and src["summary"] == orig_src,
                 "lint": lint, "sources": src, "findings": list(self.findings)}
    return Built(self.iid, files, index_line, truth)


Run.finish = _finish


def _envelope(self: Run, completed: int, withheld: bool, msgs, smsgs) -> dict:
    P = pools()
    a = self.agent
    d = {"invocation_id": self.iid, "agent_id": a.agent_id, "agent_version": a.version,
         "completed_at": ts_env(completed), "grounding_mode": self.mode, "policy_bundle_ref": POLICY_REF,
         "policy_digest": POLICY_DIGEST, "acting_for": self.principal, "contract_version": CONTRACT}
    if self.input_accepted:
        d["input_schema"] = P.schemas[a.input_class][0]
    if withheld:
        failed = []
        if msgs:
            failed.append("the grounding linter")
        if smsgs:
            failed.append("the source check")
        allv = "; ".join(msgs + smsgs)
        d["outcome"] = {"status": "failed", "statement": f"Output withheld: it failed {' and '.join(failed)}. {allv}"}
    else:
        out = {"status": self.status}
        if self.reason_code:
            out["reason_code"] = self.reason_code
        if self.referred_to:
            out["referred_to"] = self.referred_to
        out["statement"] = self.statement
        d["outcome"] = out
        payload = self.payload_doc()
        if payload is not None or self.payload_override is not None:
            d["payload"] = payload
            d["payload_schema"] = P.schemas[a.payload_class][0]
    if withheld:
        d["evidence"] = []
    elif self.evidence_override is not None:
        d["evidence"] = self.evidence_override[0]
    else:
        d["evidence"] = [ev.item for ev in self.evidence]
    tel = {"trace_id": self.trace}
    if self.model_id:
        tel["model_id"] = self.model_id
        tel["input_tokens"] = self.tokens[0]
        tel["output_tokens"] = self.tokens[1]
    tel["energy_method"] = "not_measured"
    tel["energy_estimate_j"] = None
    d["telemetry"] = tel
    d["requires_human_review"] = True
    if withheld:
        d["problem"] = {"type": PROBLEM_BASE + "grounding-violation", "title": "Output failed the grounding linter",
                        "http_status": 500,
                        "detail": "Nothing ungrounded leaves the system. Violations: " + "; ".join(msgs + smsgs)}
    elif self.problem:
        d["problem"] = self.problem
    if self.conversation_id:
        d["conversation_id"] = self.conversation_id
    if self.parent_iid:
        d["parent_invocation_id"] = self.parent_iid
    if self.delegations_override is not None:
        d["delegations"] = self.delegations_override[0]
    elif self.delegations:
        d["delegations"] = self.delegations
    return d


_enc = json.encoder.encode_basestring_ascii


def _attrs_json(attrs: dict) -> str:
    """json.dumps(attrs) for the usual string/int attribute values, without the encoder set-up."""
    parts = []
    for k, v in attrs.items():
        t = type(v)
        if t is str:
            parts.append(f"{_enc(k)}: {_enc(v)}")
        elif t is int:
            parts.append(f"{_enc(k)}: {v}")
        else:
            return json.dumps(attrs)
    return "{" + ", ".join(parts) + "}"


def _span_line(self: Run, s: Span) -> str:
    """One spans.jsonl line, byte-identical to json.dumps(<SDK to_json dict>) (docs/rules.md#spans)."""
    if s.drop:                             # rare hostile shapes: build the dict
        d = json.loads(_span_line(self, dataclasses.replace(s, drop=())))
        for k in s.drop:
            d.pop(k, None)
        return json.dumps(d)
    p = s.parent
    if isinstance(p, str) and p:
        parent = f'"0x{p}"'
    elif p is None:
        parent = "null"
    else:
        parent = json.dumps(p)
    start = ts(s.start) if isinstance(s.start, int) else s.start
    end = ts(s.end) if isinstance(s.end, int) else s.end
    name = _enc(s.name)
    links = json.dumps(s.links) if s.links else "[]"
    return (f'{{"name": {name}, "context": {{"trace_id": "0x{s.trace}", "span_id": "0x{s.sid}", '
            f'"trace_state": "[]"}}, "kind": "SpanKind.INTERNAL", "parent_id": {parent}, '
            f'"start_time": "{start}", "end_time": "{end}", "status": {{"status_code": "UNSET"}}, '
            f'"attributes": {_attrs_json(s.attrs)}, "events": [], "links": {links}, '
            f'"resource": {self.ctx.resource_json(s.service)}}}')


def _spans_bytes(self: Run, root_start: int, root_end: int) -> bytes:
    a = self.agent
    conductor = "data-director-workbench"
    gate = Span("policy_gate", self.trace, self.ctx.gate_sid(), self.root_sid, root_start + 57, root_start + 76,
                {"dd.operation": "policy_gate", "dd.agent_id": a.agent_id}, conductor)
    rattrs = {"dd.operation": "invoke_agent", "dd.agent_id": a.agent_id, "dd.grounding_mode": a.mode,
              "dd.input_hash": self.input_hash, "dd.outcome": self.status}
    for k, v in self.root_attr_edit.items():
        if v is None:
            rattrs.pop(k, None)
        else:
            rattrs[k] = v
    links = []
    if self.parent_link:
        links = [{"context": {"trace_id": "0x" + self.parent_link[0], "span_id": "0x" + self.parent_link[1],
                              "trace_state": "[]"}, "attributes": {}}]
    root = Span("invoke_agent", self.trace, self.root_sid, self.root_parent, root_start, root_end, rattrs,
                conductor, links)
    order = [gate] + (self.spans + [root] if self.in_process else [root] + self.spans)
    if self.omit_root:
        order.remove(root)
    return "".join([_span_line(self, s) + "\n" for s in order]).encode("ascii")
