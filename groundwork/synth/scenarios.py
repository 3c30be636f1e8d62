"""Scenarios of the synthetic fleet: clean runs of the four modes and every rule's violations.

A scenario is a function ``(ctx, t0) -> list[Built]`` returning the runs of one group in store
order (delegated children before their parent). Violating scenarios inject one known defect (or
a known combination) into a clean run and tag it with the verdict it causes (see build.py).
Names follow the corpus: ``pass/...``, ``outcome/...``, ``violation/<rule>/...``, ``combo/...``,
``sources/...``, ``tampered/...`` (envelope or spans edited after the store wrote them; the
recorded texts are then the verdicts on the edited files), ``extension/GW*/...``.
"""

from __future__ import annotations

import json
import random

from groundwork.core.canonical import content_hash, project

from groundwork.synth.build import Built, Ev, Ref, Run, ts, ts_env, uuid7
from groundwork.synth.pools import AGENTS, FC_REF, FS_REF, FS_STALE, PRINCIPALS, PROBLEM_BASE, Record, pools

_ALT_CANON = ("json-sorted-utf8-v2", "dd-json-v1", "sha256-raw")


class Ctx:
    """Per-chunk generation state: the random stream and per-process resource attributes."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.pinned = {FS_REF, FS_STALE, FC_REF}
        self._res: dict[str, dict] = {}
        self._resj: dict[str, str] = {}
        self.principal = PRINCIPALS[0]
        self.conversation_id = None
        self.nchild = 1                  # children of the next delegation parent (planned)

    def resource(self, service: str) -> dict:
        r = self._res.get(service)
        if r is None:
            g = self.rng.getrandbits
            inst = f"{g(32):08x}-{g(16):04x}-4{g(12):03x}-{8 | g(2):x}{g(12):03x}-{g(48):012x}"
            r = self._res[service] = {"attributes": {
                "telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry",
                "telemetry.sdk.version": "1.45.2", "service.instance.id": inst, "service.name": service},
                "schema_url": ""}
        return r

    def resource_json(self, service: str) -> str:
        r = self._resj.get(service)
        if r is None:
            r = self._resj[service] = json.dumps(self.resource(service))
        return r

    def gate_sid(self) -> str:
        return f"{self.rng.getrandbits(64):016x}"

    def new_group(self, t0: int):
        rng = self.rng
        self.principal = PRINCIPALS[rng.randrange(len(PRINCIPALS))] if rng.random() < 0.5 else PRINCIPALS[0]
        self.conversation_id = uuid7(t0 // 1000 - 5, rng.getrandbits(74)) if rng.random() < 0.3 else None


# ---------------------------------------------------------------------------------------------
# Clean baselines of each agent
# ---------------------------------------------------------------------------------------------

def fs_records(run: Run, k: int) -> list[Record]:
    return run.ctx.rng.sample(pools().fs, k)


def r3(run: Run, recs=None, *, ref=FS_REF, chat=None, cite=True, evidence=True, retrieve=True):
    rng = run.ctx.rng
    recs = recs if recs is not None else fs_records(run, rng.randint(1, 5))
    for rec in recs if retrieve else ():
        run.retrieval(rec.sid, rec.chash)
    if chat if chat is not None else rng.random() < 0.6:
        run.chat()
    if evidence:
        for rec in recs:
            run.record_evidence(rec, ref)
    if cite:
        run.refs = [Ref(rec.sid, rec.chash) for rec in recs]
        run.items_key = "items"
        for rec in recs[:3]:
            run.items.append(({"kind": rng.choice(("controlled_vocabulary", "format", "reporting_guideline")),
                               "target": "dataset", "score": rng.choice((0.62, 0.71, 0.81, 0.9, 1.0)),
                               "rationale": f"{rec.record['name']} ({rec.sid}) fits the dataset.",
                               "rationale_derivation": "model", "classification_derivation": "lexical"},
                              [Ref(rec.sid, rec.chash)]))
    run.payload_fields = {"searched": {"queries": [f"subject: {pools().inputs['r3'][0][0]['title']!r}"],
                                       "snapshot_ref": ref or FS_REF, "candidates_retrieved": len(recs) + 1,
                                       "candidates_qualifying": len(recs)}}
    run.statement = (f"{min(len(recs), 3)} recommendation(s), grounded in {len(recs)} FAIRsharing record(s) "
                     f"({ref}). Human review is required.")
    return recs


def fc(run: Run, recs=None, *, chat=True):
    rng = run.ctx.rng
    recs = recs if recs is not None else rng.sample(pools().fc, rng.randint(1, 3))
    for rec in recs:
        run.retrieval(rec.sid, rec.chash)
    if chat:
        run.chat()
    for rec in recs:
        run.record_evidence(rec, FC_REF, content=False)
    run.refs = [Ref(rec.sid, rec.chash) for rec in recs]
    run.payload_fields = {"verdict": rng.choice(("supported", "refuted", "unverifiable")),
                          "rationale": "The packaged sources state the retention period.",
                          "rationale_derivation": "model"}
    run.statement = f"Checked against {len(recs)} source(s)."
    return recs


def qr(run: Run, *, chat=None, evidence=True):
    rng = run.ctx.rng
    if chat if chat is not None else rng.random() < 0.4:
        run.chat()
    sid, h = run.input_pair()
    run.refs = [Ref(sid, h)]
    run.items_key = "findings"
    for crit in rng.sample(("keywords", "licence", "creators", "title"), rng.randint(1, 3)):
        run.items.append(({"criterion": crit, "severity": rng.choice(("warning", "info")),
                           "message": f"Check the {crit}.", "derivation": "lexical"}, [Ref(sid, h)]))
    run.payload_fields = {"score": rng.choice((0.5, 0.67, 0.83, 1.0))}
    if evidence:
        run.input_evidence()
    run.statement = f"Reviewed 6 criteria; {len(run.items)} finding(s)."


def hw(run: Run, *, evidence=True, payload=True):
    name = run.input_doc.get("greeted_name", "you")
    if payload:
        run.refs = [Ref(*run.input_pair())]
        run.payload_fields = {"greeting_text": f"Hello, {name}!", "greeting_derivation": "template"}
    else:
        run.has_payload = False
    if evidence:
        run.input_evidence()
    run.statement = f"Greeted {name}."


BASE = {"r3": r3, "fc": fc, "qr": qr, "hw": hw}


def child_run(parent: Run, key: str, scenario: str, tweak=None) -> tuple[Run, Built]:
    """Run a delegated child under a new `delegate` span of the parent (docs/rules.md#delegated-runs)."""
    ctx = parent.ctx
    dspan = parent._span("delegate", parent.cur, None, {"dd.operation": "delegate", "dd.agent_id": pools_agent(key)})
    child = Run(ctx, key, parent.cur + 150, scenario + "/child", "conductor-delegated-child")
    child.parent_iid = parent.iid
    child.parent_link = (parent.trace, dspan.sid)
    child.conversation_id = parent.conversation_id
    child.principal = parent.principal
    BASE[key](child)
    if tweak:
        tweak(child)
    built = child.finish(need_hash=True)
    parent.cur = child.root_end + ctx.rng.randint(200, 900)
    dspan.end = parent.cur
    dspan.attrs["dd.source_id"] = f"invocation:{child.iid}"
    dspan.attrs["dd.content_hash"] = child.env_hash
    parent.cur += 120
    parent.delegations.append({"delegated_invocation_id": child.iid, "delegated_agent_id": child.agent.agent_id,
                               "delegated_agent_version": child.agent.version,
                               "delegated_status": child.stored_status, "content_hash": child.env_hash})
    return child, built


def pools_agent(key: str) -> str:
    return AGENTS[key].agent_id


def ds(run: Run, keys=None, *, chat=None, tweak=None, cite_input=True, ev_input=True):
    """A delegation parent relaying 0-3 children; returns the children's Built in store order."""
    rng = run.ctx.rng
    if chat if chat is not None else rng.random() < 0.3:
        run.chat()
    keys = keys if keys is not None else [rng.choice(("hw", "qr", "r3", "fc")) for _ in range(run.ctx.nchild)]
    built, children = [], []
    for k in keys:
        c, b = child_run(run, k, run.scenario, tweak)
        children.append(c)
        built.append(b)
    sid, h = run.input_pair()
    run.refs = ([Ref(sid, h)] if cite_input else []) + [Ref(f"invocation:{c.iid}", c.env_hash) for c in children]
    if ev_input:
        run.input_evidence()
    else:
        run.d3 = True
    for c in children:
        run.evidence.append(Ev({"source_id": f"invocation:{c.iid}", "retrieved_at": _ts_env(run, c),
                                "hash_algorithm": "sha256", "canonicalisation": "dd-envelope-json-v1",
                                "content_hash": c.env_hash}))
    run.payload_fields = {"reply_text": "; ".join(f"{c.agent.agent_id}: {c.statement}" for c in children) or "Nothing to relay.",
                          "reply_derivation": "template"}
    run.statement = f"Relayed {len(children)} repl{'y' if len(children) == 1 else 'ies'}."
    return built, children


def _ts_env(run: Run, child: Run) -> str:
    return ts_env(child.root_end + 90)


# ---------------------------------------------------------------------------------------------
# Scenario helpers
# ---------------------------------------------------------------------------------------------

def one(ctx, t0, key, scenario, body, origin="conductor", base=True) -> list[Built]:
    run = Run(ctx, key, t0, scenario, origin)
    run.in_process = ctx.rng.random() < 0.1
    if base:
        BASE[key](run)
    body(run)
    return [run.finish()]


def _noop(run):
    pass


def other_hash(run: Run, exclude) -> tuple[str, str]:
    while True:
        rec = run.ctx.rng.choice(pools().fs)
        if rec.chash not in exclude:
            return rec.sid, rec.chash


def fake_record(run: Run, sid=None) -> Record:
    rng = run.ctx.rng
    sid = sid or f"FAIRsharing.zz{rng.getrandbits(20):05x}"
    rec = {"fairsharing_id": sid, "doi": f"10.25504/{sid}", "name": "Invented Standard", "record_type": "model_and_format",
           "status": "ready", "description": "A record that no snapshot holds.", "subjects": ["Informatics"], "domains": []}
    return Record(sid, rec, "json-sorted-utf8-v1", content_hash("json-sorted-utf8-v1", rec),
                  project("json-sorted-utf8-v1", rec), None)


def altered(rec: Record) -> dict:
    c = dict(rec.content)
    c["name"] = c["name"] + " (edited)"
    return c


def tag_refs(run: Run, chash, tag):
    for r in run.refs + [r for _, refs in run.items for r in refs]:
        if r.raw is None and r.chash == chash:
            r.tags.add(tag)


# ---------------------------------------------------------------------------------------------
# Clean scenarios
# ---------------------------------------------------------------------------------------------

def s_pass_r3(ctx, t0):
    return one(ctx, t0, "r3", "pass/retrieval/fairsharing", _noop)


def s_pass_fc(ctx, t0):
    return one(ctx, t0, "fc", "pass/retrieval/packaged-sources", _noop)


def s_pass_qr(ctx, t0):
    return one(ctx, t0, "qr", "pass/input_only/review", _noop)


def s_pass_hw(ctx, t0):
    return one(ctx, t0, "hw", "pass/none/greeting", _noop)


def s_pass_ds(ctx, t0):
    run = Run(ctx, "ds", t0, "pass/delegation/children")
    built, _ = ds(run)
    return built + [run.finish()]


def s_pass_ds_none(ctx, t0):
    run = Run(ctx, "ds", t0, "pass/delegation/no-children")
    built, _ = ds(run, keys=[])
    return built + [run.finish()]


def s_live(ctx, t0):
    run = Run(ctx, "r3", t0, "sources/unresolved/live-snapshot-ref")
    r3(run, ref="live")
    return [run.finish()]


def s_noref(ctx, t0):
    run = Run(ctx, "r3", t0, "sources/unresolved/no-snapshot-ref")
    r3(run, ref=None)
    return [run.finish()]


def s_stale(ctx, t0):
    run = Run(ctx, "r3", t0, "sources/verified/stale-snapshot-ref")
    r3(run, ref=FS_STALE)
    return [run.finish()]


def s_retrieval_cites_input(ctx, t0):
    def body(run):
        sid, h = run.input_pair()
        run.retrieval(sid, h)
        run.input_evidence(src=("unresolved", f"{sid} (None)"))
    return one(ctx, t0, "r3", "sources/unresolved/retrieval-mode-cites-input", body)


def s_g1_edge(ctx, t0):
    """A chat starting exactly when the first retrieval ends is fine (strict comparison)."""
    run = Run(ctx, "r3", t0, "pass/retrieval/chat-starts-when-retrieval-ends")
    rec = fs_records(run, 1)
    sp = run.retrieval(rec[0].sid, rec[0].chash)
    run.chat(start=sp.end)
    r3(run, rec, chat=False, retrieve=False)
    return [run.finish()]


def s_int_attr(ctx, t0):
    """A retrieval span's dd.source_id is the JSON number 42; the linter compares str() values."""
    run = Run(ctx, "fc", t0, "pass/retrieval/numeric-source-id-attribute")
    fc(run)
    h = content_hash("dd-json-document-v1", {"source_id": "42", "note": "numeric id"})
    run.retrieval(42, h)
    run.refs.append(Ref("42", h))
    run.evidence.append(Ev({"source_id": "42", "snapshot_ref": "live", "hash_algorithm": "sha256",
                            "canonicalisation": "dd-json-document-v1", "content_hash": h},
                           src=("unresolved", "42 (live)")))
    return [run.finish()]


def s_duplicate_chat(ctx, t0):
    """GW2: an agent returned the same chat span twice; the workbench counts it twice and passes."""
    run = Run(ctx, "r3", t0, "extension/GW2/duplicate-chat-span")
    r3(run, chat=True)
    chat = next(s for s in run.spans if s.name == "chat")
    run.spans.append(chat)
    run.findings.append("GW2")
    return [run.finish()]


def s_abstained(ctx, t0):
    run = Run(ctx, "r3", t0, "outcome/abstained/retrieval-nothing-found")
    rng = ctx.rng
    for rec in fs_records(run, rng.randint(0, 2)):
        run.retrieval(rec.sid, rec.chash)
    run.status, run.has_payload = "abstained", False
    run.reason_code = "no_qualifying_resource" if run.spans else "no_candidates_retrieved"
    run.statement = "No qualifying resource was found."
    return [run.finish()]


def s_referred(ctx, t0):
    run = Run(ctx, ctx.rng.choice(("qr", "r3", "hw")), t0, "outcome/referred/policy-requires-approval")
    run.status, run.has_payload = "referred", False
    run.reason_code, run.referred_to = "policy_requires_approval", "data_steward"
    run.statement = "The institutional profile requires approval for this action."
    return [run.finish()]


def s_refused(ctx, t0):
    run = Run(ctx, ctx.rng.choice(("qr", "r3", "hw", "fc")), t0, "outcome/failed/agent-not-permitted")
    run.status, run.has_payload = "failed", False
    run.statement = "Refused by the institutional profile."
    run.problem = {"type": PROBLEM_BASE + "agent-not-permitted", "title": "Agent not enabled by the institutional profile",
                   "http_status": 403, "detail": f"{run.agent.agent_id} is not enabled by profile default@v2."}
    return [run.finish()]


def s_agent_error(ctx, t0):
    run = Run(ctx, "r3", t0, "outcome/failed/agent-raised")
    rec = fs_records(run, 1)[0]
    run.retrieval(rec.sid, rec.chash)
    run.status, run.has_payload = "failed", False
    run.statement = "The agent raised an exception."
    run.problem = {"type": PROBLEM_BASE + "agent-error", "title": "Agent raised an exception", "http_status": 500,
                   "detail": "TimeoutError: registry did not answer within 30 s"}
    return [run.finish()]


def s_input_refused(ctx, t0):
    run = Run(ctx, "qr", t0, "outcome/failed/input-not-accepted")
    run.status, run.has_payload, run.input_accepted = "failed", False, False
    run.statement = "The agent does not accept this input."
    run.problem = {"type": PROBLEM_BASE + "input-not-accepted", "title": "Agent does not accept this input",
                   "http_status": 422, "detail": "quality.reviewer accepts MetadataRecord, not DatasetProfile."}
    return [run.finish()]


CLEAN = [
    (s_pass_r3, 30), (s_pass_fc, 10), (s_pass_qr, 18), (s_pass_hw, 16), (s_pass_ds, 9), (s_pass_ds_none, 1),
    (s_live, 2), (s_noref, 1), (s_stale, 1), (s_retrieval_cites_input, 1), (s_g1_edge, 1), (s_int_attr, 1),
    (s_abstained, 3), (s_referred, 2), (s_refused, 2), (s_agent_error, 1), (s_input_refused, 1),
]


# ---------------------------------------------------------------------------------------------
# Violations the conductor catches (succeeded results are withheld; docs/rules.md#withheld-envelopes)
# ---------------------------------------------------------------------------------------------

def v_two_roots(ctx, t0):
    def body(run):
        run._span("invoke_agent", run.cur, run.cur + 40, {"dd.operation": "invoke_agent",
                                                           "dd.agent_id": run.agent.agent_id})
        run.cur += 60
        run.roots_found = 2
    return one(ctx, t0, ctx.rng.choice(("qr", "hw", "r3")), "violation/G0/two-invoke_agent-spans", body)


def v_sets_keys(ctx, t0):
    def body(run):
        sp = next(s for s in run.spans if s.name == "retrieval")
        keys = [k for k in ("dd.grounding_mode", "dd.input_hash", "dd.outcome") if ctx.rng.random() < 0.6] or ["dd.input_hash"]
        vals = {"dd.grounding_mode": "retrieval", "dd.input_hash": run.input_hash, "dd.outcome": "succeeded"}
        for k in keys:
            sp.attrs[k] = vals[k]
        sp.sets = tuple(keys)
    return one(ctx, t0, "r3", "violation/G0/agent-span-sets-conductor-attributes", body)


def v_foreign_trace(ctx, t0):
    def body(run):
        rng = ctx.rng
        if rng.random() < 0.5:     # outside the tree: reported, never counted
            sp = run.chat(trace=f"{rng.getrandbits(128):032x}", parent=None)
            sp.counted = False
        else:                      # foreign trace but parented in the tree: reported AND counted
            sp = next(s for s in run.spans if s.name == "retrieval")
            sp.trace = f"{rng.getrandbits(128):032x}"
        sp.tree = "foreign"
    return one(ctx, t0, "r3", "violation/G0/span-in-foreign-trace", body)


def v_orphan(ctx, t0):
    def body(run):
        rng = ctx.rng
        parent = rng.choice((f"{rng.getrandbits(64):016x}", None, 0))
        name = rng.choice(("execute_tool", "chat"))
        if name == "chat":
            sp = run.chat(parent=parent)
        else:
            sp = run._span("execute_tool", run.cur, run.cur + 300, {"dd.operation": "execute_tool",
                                                                    "dd.tool_name": "lookup"}, parent=parent)
            run.cur += 320
        sp.tree, sp.counted = "orphan", False
    return one(ctx, t0, "hw", "violation/G0/span-not-descending-from-root", body)


def v_payload_shape_withheld(ctx, t0):
    """An agent returns a payload without grounded_on: G0, the conductor withholds it."""
    def body(run):
        doc = run.payload_doc()
        del doc["grounded_on"]
        run.payload_override = (doc,)
        run.payload_g0 = [f"G0: payload {run.agent.payload_class!r} lacks grounded_on; an ungroundable payload "
                          "is a violation, not a pass"]
        run.refs = []                      # only items' references remain in `grounded`
    return one(ctx, t0, ctx.rng.choice(("qr", "hw")), "violation/G0/payload-lacks-grounded_on", body)


def v_e1_altered(ctx, t0):
    def body(run):
        ev = run.evidence[ctx.rng.randrange(len(run.evidence))]
        ev.item["content"] = altered(pools().fs_by_sid[ev.item["source_id"]])
        ev.tags.add("E1hash")
    return one(ctx, t0, "r3", "violation/E1/content-altered-hash-kept", body)


def v_e1_canon(ctx, t0):
    def body(run):
        ev = run.evidence[ctx.rng.randrange(len(run.evidence))]
        ev.item["canonicalisation"] = ctx.rng.choice(_ALT_CANON)
        ev.tags.add("E1canon")
        if ctx.rng.random() < 0.5:
            ev.item["snapshot_ref"] = "live"
            ev.src = ("unresolved", f"{ev.item['source_id']} (live)")
        else:
            ev.src = ("S2canon",)
    return one(ctx, t0, "r3", "violation/E1/unknown-canonicalisation", body)


def v_e1_input(ctx, t0):
    def body(run):
        ev = run.evidence[0]
        ev.item["content"] = {"schema_class": "MetadataRecord", "title": "Not the input"}
        ev.tags.add("E1hash")
    return one(ctx, t0, "qr", "violation/E1/input_only-content-is-not-the-input", body)


def v_g1_early(ctx, t0):
    run = Run(ctx, "r3", t0, "violation/G1/chat-before-retrieval")
    for _ in range(ctx.rng.randint(1, 2)):
        run.chat().early = True
    r3(run, chat=False)
    return [run.finish()]


def v_g1_none_abstained(ctx, t0):
    run = Run(ctx, "r3", t0, "violation/G1/chat-without-any-retrieval-abstained")
    run.chat()
    run.status, run.has_payload = "abstained", False
    run.reason_code, run.statement = "no_candidates_retrieved", "Nothing was retrieved."
    return [run.finish()]


_ODD_SIDS = ("FAIRsharing.smuggled", "FAIRsharing.smüggled", "it's-a-source", 'say "hi"', "tab\there")


def v_g2_unknown_sid(ctx, t0):
    def body(run):
        item_refs = run.items[ctx.rng.randrange(len(run.items))][1]
        h = item_refs[0].chash
        item_refs.append(Ref(ctx.rng.choice(_ODD_SIDS), h, {"G2"}))
    return one(ctx, t0, "r3", "violation/G2/unknown-source-id-same-hash", body)


def v_g2_wrong_hash(ctx, t0):
    def body(run):
        r = run.refs[0]
        _, h = other_hash(run, {e.item["content_hash"] for e in run.evidence})
        run.refs[0] = Ref(r.sid, h, {"G2", "G4"})
    return one(ctx, t0, "r3", "violation/G2/wrong-hash-for-source", body)


def v_g2_nothing(ctx, t0):
    def body(run):
        run.refs = []
        run.items = [(f, []) for f, _ in run.items]
    return one(ctx, t0, "r3", "violation/G2/rests-on-nothing", body)


def v_g3(ctx, t0):
    def body(run):
        sid, h = other_hash(run, {e.item["content_hash"] for e in run.evidence})
        rec = pools().fs_by_sid[sid]
        run.record_evidence(rec, FS_REF, tags={"G3"})
    return one(ctx, t0, "r3", "violation/G3/evidence-not-retrieved", body)


def v_g4(ctx, t0):
    def body(run):
        drop = run.evidence.pop(ctx.rng.randrange(len(run.evidence)))
        tag_refs(run, drop.item["content_hash"], "G4")
    return one(ctx, t0, "r3", "violation/G4/one-citation-missing-from-evidence", body)


def v_g4_none(ctx, t0):
    def body(run):
        for ev in run.evidence:
            tag_refs(run, ev.item["content_hash"], "G4")
        run.evidence = []
    return one(ctx, t0, "r3", "violation/G4/no-evidence", body)


def v_r1(ctx, t0, key=None):
    key = key or ctx.rng.choice(("qr", "hw"))
    run = Run(ctx, key, t0, f"violation/R1/{run_mode(key)}-retrieves")
    for rec in fs_records(run, ctx.rng.randint(1, 2)):
        run.retrieval(rec.sid, rec.chash)
    if key == "ds":
        built, _ = ds(run, keys=[ctx.rng.choice(("hw", "qr"))])
        return built + [run.finish()]
    BASE[key](run)
    return [run.finish()]


def v_r1_ds(ctx, t0):
    return v_r1(ctx, t0, "ds")


def run_mode(key):
    return AGENTS[key].mode


def v_r2_payload(ctx, t0):
    def body(run):
        rec = ctx.rng.choice(pools().fs)
        run.items[0][1].append(Ref(rec.sid, rec.chash, {"R2"}))
    return one(ctx, t0, "qr", "violation/R2/payload-cites-foreign-source", body)


def v_r2_evidence(ctx, t0):
    def body(run):
        rec = ctx.rng.choice(pools().fs)
        run.record_evidence(rec, FS_REF, content=False, tags={"R2"})
    return one(ctx, t0, ctx.rng.choice(("qr", "hw")), "violation/R2/evidence-cites-foreign-source", body)


def v_r2_wrong_input(ctx, t0):
    def body(run):
        other = next(h for d, h in pools().inputs["qr"] if h != run.input_hash)
        for r in run.refs + [r for _, refs in run.items for r in refs]:
            r.chash = other
            r.tags.add("R2")
        run.evidence[0].item["content_hash"] = other
        run.evidence[0].tags.add("R2")
    return one(ctx, t0, "qr", "violation/R2/wrong-input-hash", body)


def v_r2_other_input(ctx, t0):
    def body(run):
        sid = f"input:{uuid7(run.t0 // 1000 - 60000, ctx.rng.getrandbits(74))}"
        run.refs = [Ref(sid, run.input_hash, {"R2"})]
    return one(ctx, t0, "hw", "violation/R2/none-cites-another-invocations-input", body)


def v_r3(ctx, t0):
    key = ctx.rng.choice(("qr", "hw"))
    run = Run(ctx, key, t0, f"violation/R3/{run_mode(key)}-no-evidence")
    if key == "qr":
        qr(run, evidence=False)
    else:
        hw(run, evidence=False, payload=ctx.rng.random() < 0.5)
    return [run.finish()]


def v_n1(ctx, t0):
    def body(run):
        for _ in range(ctx.rng.randint(1, 2)):
            run.chat()
    return one(ctx, t0, "hw", "violation/N1/none-calls-a-model", body)


def _ds_violation(ctx, t0, scenario, mutate, keys=None, **kw):
    run = Run(ctx, "ds", t0, scenario)
    built, children = ds(run, keys=keys if keys is not None else [ctx.rng.choice(("hw", "qr"))], **kw)
    mutate(run, children)
    return built + [run.finish()]


def v_d1(ctx, t0):
    def m(run, children):
        c = children[0]
        fake = uuid7(c.t0 // 1000, ctx.rng.getrandbits(74))
        for i, r in enumerate(run.refs):
            if r.sid == f"invocation:{c.iid}":
                run.refs[i] = Ref(f"invocation:{fake}", c.env_hash, {"D1"})
    return _ds_violation(ctx, t0, "violation/D1/right-hash-wrong-child-id", m)


def v_d2(ctx, t0):
    def m(run, children):
        rec = ctx.rng.choice(pools().fs)
        run.record_evidence(rec, FS_REF, content=False, tags={"D2"})
    return _ds_violation(ctx, t0, "violation/D2/extra-evidence-not-input-or-child", m)


def v_d3(ctx, t0):
    return _ds_violation(ctx, t0, "violation/D3/evidence-omits-the-input", lambda r, c: None,
                         cite_input=False, ev_input=False)


def v_d1_g4(ctx, t0):
    def m(run, children):
        c = children[0]
        forged = content_hash("dd-json-document-v1", {"forged": c.iid})
        for i, r in enumerate(run.refs):
            if r.sid == f"invocation:{c.iid}":
                run.refs[i] = Ref(r.sid, forged, {"D1", "G4"})
    return _ds_violation(ctx, t0, "combo/D1+G4/forged-child-hash", m)


def v_d1_d2(ctx, t0):
    def m(run, children):
        fake = uuid7(run.t0 // 1000 + 3, ctx.rng.getrandbits(74))
        h = content_hash("dd-json-document-v1", {"invented": fake})
        run.refs.append(Ref(f"invocation:{fake}", h, {"D1"}))
        run.evidence.append(Ev({"source_id": f"invocation:{fake}", "hash_algorithm": "sha256",
                                "canonicalisation": "dd-envelope-json-v1", "content_hash": h}, {"D2"}))
    return _ds_violation(ctx, t0, "combo/D1+D2/invented-child-no-delegation-ran", m, keys=[])


def v_everything_retrieval(ctx, t0):
    run = Run(ctx, "r3", t0, "combo/G1+G2+G3+G4/everything-wrong-retrieval")
    a, b, c = fs_records(run, 3)
    run.chat().early = True
    run.retrieval(a.sid, a.chash)
    run.record_evidence(c, FS_REF, tags={"G3"})
    run.refs = [Ref(a.sid, a.chash, {"G4"}), Ref(b.sid, b.chash, {"G2", "G4"})]
    run.statement = "2 recommendation(s)."
    return [run.finish()]


def v_g2_g3_identity(ctx, t0):
    def body(run):
        # the retrieval span of the first record carries no dd.content_hash: its pair is (sid, 'None')
        sp = next(s for s in run.spans if s.name == "retrieval")
        h = sp.attrs.pop("dd.content_hash")
        if sum(1 for s in run.spans if s.name == "retrieval" and s.attrs.get("dd.content_hash") == h):
            return
        for r in run.refs + [r for _, refs in run.items for r in refs]:
            if r.chash == h:
                r.tags.add("G2")
        for ev in run.evidence:
            if ev.item["content_hash"] == h:
                ev.tags.add("G3")
    return one(ctx, t0, "r3", "combo/G2+G3/retrieval-span-lacks-content-hash", body)


def v_none_everything(ctx, t0):
    run = Run(ctx, "hw", t0, "combo/R1+R2+R3+N1/none-does-everything-wrong")
    rec = fs_records(run, 1)[0]
    run.retrieval(rec.sid, rec.chash)
    run.chat()
    hw(run, evidence=False)
    run.refs = [Ref(rec.sid, rec.chash, {"R2"})]
    return [run.finish()]


def v_e1_g3(ctx, t0):
    def body(run):
        sid, _ = other_hash(run, {e.item["content_hash"] for e in run.evidence})
        rec = pools().fs_by_sid[sid]
        run.record_evidence(rec, FS_REF, tags={"G3", "E1hash"}, content=True)
        run.evidence[-1].item["content"] = altered(rec)
    return one(ctx, t0, "r3", "combo/E1+G3/altered-unretrieved-evidence", body)


def v_g0_n1(ctx, t0):
    def body(run):
        sp = run.chat()
        sp.attrs["dd.input_hash"] = run.input_hash
        sp.sets = ("dd.input_hash",)
    return one(ctx, t0, "hw", "combo/G0+N1/chat-span-sets-input-hash", body)


# ---- source check ---------------------------------------------------------------------------

def v_s1(ctx, t0):
    run = Run(ctx, "r3", t0, "sources/S1/invented-record")
    recs = fs_records(run, ctx.rng.randint(0, 2)) + [fake_record(run)]
    r3(run, recs)
    run.evidence[-1].src = ("S1",)
    return [run.finish()]


def v_s2_rehashed(ctx, t0):
    run = Run(ctx, "r3", t0, "sources/S2/altered-record-rehashed")
    rec = fs_records(run, 1)[0]
    new = altered(rec)
    fake = Record(rec.sid, new, rec.canon, content_hash(rec.canon, new), new, rec.uri)
    r3(run, fs_records(run, ctx.rng.randint(0, 2)) + [fake])
    run.evidence[-1].src = ("S2hash", rec.chash)
    return [run.finish()]


def v_s2_canon(ctx, t0):
    run = Run(ctx, "fc", t0, "sources/S2/unknown-canonicalisation-without-content")
    fc(run)
    ev = run.evidence[ctx.rng.randrange(len(run.evidence))]
    ev.item["canonicalisation"] = "dd-json-document-v2"
    ev.src = ("S2canon",)
    return [run.finish()]


def v_s1_s2(ctx, t0):
    run = Run(ctx, "r3", t0, "sources/S1+S2/invented-and-altered")
    rec = fs_records(run, 1)[0]
    new = altered(rec)
    fake2 = Record(rec.sid, new, rec.canon, content_hash(rec.canon, new), new, rec.uri)
    r3(run, [fake_record(run), fake2])
    run.evidence[0].src = ("S1",)
    run.evidence[1].src = ("S2hash", rec.chash)
    return [run.finish()]


def v_g3_s1(ctx, t0):
    def body(run):
        rec = fake_record(run)
        run.record_evidence(rec, FS_REF, tags={"G3"}, src=("S1",))
    return one(ctx, t0, "r3", "combo/G3+S1/unretrieved-invented-evidence", body)


# ---- violations on runs that are not withheld (not succeeded): recorded = re-lint ------------

def v_abstained_g3_s1(ctx, t0):
    run = Run(ctx, "r3", t0, "outcome/abstained/with-unretrieved-evidence-G3-S1-not-withheld")
    rec = fs_records(run, 1)[0]
    run.retrieval(rec.sid, rec.chash)
    run.record_evidence(rec, FS_REF)
    run.record_evidence(fake_record(run), FS_REF, tags={"G3"}, src=("S1",))
    r2 = fs_records(run, 1)[0]
    new = altered(r2)
    run.record_evidence(Record(r2.sid, new, r2.canon, content_hash(r2.canon, new), new, r2.uri), FS_REF,
                        tags={"G3"}, src=("S2hash", r2.chash))
    run.status, run.has_payload = "abstained", False
    run.reason_code, run.statement = "no_qualifying_resource", "Nothing qualified."
    return [run.finish()]


def v_referred_r2(ctx, t0):
    run = Run(ctx, "qr", t0, "outcome/referred/evidence-cites-foreign-source-not-withheld")
    run.input_evidence()
    run.record_evidence(ctx.rng.choice(pools().fs), FS_REF, content=False, tags={"R2"})
    run.status, run.has_payload = "referred", False
    run.reason_code, run.referred_to = "requires_human_judgement", "data_steward"
    run.statement = "A person should judge this record."
    return [run.finish()]


def v_abstained_d2(ctx, t0):
    run = Run(ctx, "ds", t0, "outcome/abstained/delegation-evidence-unknown-child-not-withheld")
    run.input_evidence()
    fake = uuid7(run.t0 // 1000 + 2, ctx.rng.getrandbits(74))
    run.evidence.append(Ev({"source_id": f"invocation:{fake}", "hash_algorithm": "sha256",
                            "canonicalisation": "dd-envelope-json-v1",
                            "content_hash": content_hash("dd-json-document-v1", {"x": fake})}, {"D2"}))
    run.status, run.has_payload = "abstained", False
    run.reason_code, run.statement = "not_applicable", "Nothing to relay."
    return [run.finish()]


def v_child_withheld(ctx, t0):
    """A child breaks N1 and is withheld; the parent relays the failed child and passes."""
    def tweak(child):
        child.chat()
    run = Run(ctx, "ds", t0, "pass/delegation/relays-withheld-child")
    built, _ = ds(run, keys=["hw"], tweak=tweak)
    return built + [run.finish()]


def v_none_dup_retrieval(ctx, t0):
    def body(run):
        rec = fs_records(run, 1)[0]
        sp = run.retrieval(rec.sid, rec.chash)
        run.spans.append(sp)
        run.findings.append("GW2")
    return one(ctx, t0, "hw", "extension/GW2/none-duplicate-retrieval-span", body)


# ---- groundwork extensions: archive-level findings ------------------------------------------

def v_gw3(ctx, t0):
    def tweak(child):
        def edit(doc):
            doc["outcome"]["statement"] += " (edited after storing)"
        child.stored_edit = edit
        child.origin = "tampered-copy"
    run = Run(ctx, "ds", t0, "extension/GW3/child-envelope-edited-after-storing")
    built, _ = ds(run, keys=[ctx.rng.choice(("hw", "qr"))], tweak=tweak)
    run.findings.append("GW3")
    return built + [run.finish()]


def v_gw4(ctx, t0):
    def tweak(child):
        child.write_folder = False
    run = Run(ctx, "ds", t0, "extension/GW4/child-folder-missing")
    built, _ = ds(run, keys=[ctx.rng.choice(("hw", "qr"))], tweak=tweak)
    run.findings.append("GW4")
    return built + [run.finish()]


# ---- tampered copies: files edited after storing; recorded texts are the verdicts on them -----

def _tampered(ctx, t0, key, scenario, body):
    return one(ctx, t0, key, scenario, body, origin="tampered-copy")


def t_cycle(ctx, t0):
    def body(run):
        sp = run.spans[-1] if run.spans else run.chat()
        run.root_parent = sp.sid
        run.unlintable = "span-id cycle reachable from invoke_agent"
        run.findings.append("GW1")
    return _tampered(ctx, t0, "r3", "extension/GW1/root-parent-is-its-descendant", body)


def t_missing_time(ctx, t0):
    def body(run):
        run.chat().drop = ("start_time",)
        run.unlintable = "span line without start_time"
    return _tampered(ctx, t0, "qr", "tampered/unlintable/span-without-start_time", body)


def t_no_root(ctx, t0):
    def body(run):
        run.omit_root, run.roots_found = True, 0
    return _tampered(ctx, t0, ctx.rng.choice(("hw", "r3")), "tampered/G0/no-invoke_agent-span", body)


def t_mode_differs(ctx, t0):
    def body(run):
        run.mode = "input_only"
        run.rootmode_msg = "G0: envelope declares grounding_mode 'input_only' but the root span carries 'none'"
    return _tampered(ctx, t0, "hw", "tampered/G0/envelope-mode-differs-only", body)


def t_unknown_mode(ctx, t0):
    def body(run):
        run.mode = ctx.rng.choice(("telepathy", "Retrieval", ""))
    return _tampered(ctx, t0, "r3", "tampered/G0/unknown-grounding-mode", body)


def t_missing_mode(ctx, t0):
    def body(run):
        run.mode = None
        run.envelope_edit = lambda d: d.pop("grounding_mode")
        run.evidence[0].src = ("unresolved", f"input:{run.iid} (None)")
    return _tampered(ctx, t0, "hw", "tampered/G0/missing-grounding-mode", body)


def t_mode_list(ctx, t0):
    def body(run):
        run.mode = ["retrieval"]
        run.unverifiable = "grounding_mode is not a string"
    return _tampered(ctx, t0, "r3", "tampered/G0/grounding-mode-is-a-list", body)


def t_root_no_mode(ctx, t0):
    def body(run):
        run.root_attr_edit = {"dd.grounding_mode": None}
        run.rootmode_msg = "G0: envelope declares grounding_mode 'none' but the root span carries None"
    return _tampered(ctx, t0, "hw", "tampered/G0/root-span-lacks-grounding-mode", body)


def t_root_no_input_hash(ctx, t0):
    def body(run):
        run.root_attr_edit = {"dd.input_hash": None}
        run.root_attr_edit_value = "None"
        for r in run.refs + [r for _, refs in run.items for r in refs]:
            r.tags.add("R2")
        run.evidence[0].tags.add("R2")
    runs = _tampered(ctx, t0, "qr", "tampered/R2/root-span-lacks-input-hash", body)
    return runs


def t_no_iid(ctx, t0):
    def body(run):
        run.input_iid = None
        run.envelope_edit = lambda d: d.pop("invocation_id")
        for r in run.refs + [r for _, refs in run.items for r in refs]:
            r.tags.add("R2")
        run.evidence[0].tags.add("R2")
    return _tampered(ctx, t0, "qr", "tampered/R2/envelope-lacks-invocation_id", body)


def t_payload_not_object(ctx, t0):
    def body(run):
        run.payload_override = ([f"Hello, {run.input_doc['greeted_name']}!"],)
        run.refs = []
        run.payload_g0 = ["G0: payload is not an object"]
    return _tampered(ctx, t0, "hw", "tampered/G0/payload-not-an-object", body)


def t_payload_lacks_class(ctx, t0):
    def body(run):
        doc = run.payload_doc()
        del doc["schema_class"]
        run.payload_override = (doc,)
        run.payload_g0 = ["G0: payload lacks schema_class"]
    return _tampered(ctx, t0, "qr", "tampered/G0/payload-lacks-schema_class", body)


def t_payload_empty(ctx, t0):
    def body(run):
        run.payload_override = ({},)
        run.refs, run.items = [], []
        run.payload_g0 = ["G0: payload lacks schema_class",
                          "G0: payload None lacks grounded_on; an ungroundable payload is a violation, not a pass"]
    return _tampered(ctx, t0, "r3", "tampered/G0/payload-is-empty-object", body)


def t_grounded_not_list(ctx, t0):
    def body(run):
        doc = run.payload_doc()
        doc["grounded_on"] = doc["grounded_on"][0]["source_id"]
        doc.pop("items", None)
        run.payload_override = (doc,)
        run.refs, run.items = [], []
        run.payload_g0 = ["G0: grounded_on is not a list"]
    return _tampered(ctx, t0, "r3", "tampered/G0/grounded_on-not-a-list", body)


def t_malformed_ref(ctx, t0):
    def body(run):
        r = run.items[0][1][0]
        raw = ctx.rng.choice(({"source_id": r.sid}, {"source_id": r.sid, "content_hash": None},
                              [r.sid, r.chash], r.sid))
        run.items[0][1].insert(0, Ref(None, None, raw=raw))
    return _tampered(ctx, t0, "r3", "tampered/G0/malformed-grounded_on-entry", body)


def t_content_not_object(ctx, t0):
    def body(run):
        ev = run.evidence[0]
        ev.item["content"] = ctx.rng.choice((["not", "an", "object"], "text", 7))
        ev.tags.add("E1obj")
    return _tampered(ctx, t0, "r3", "tampered/E1/content-not-an-object", body)


def t_evidence_empty_string(ctx, t0):
    def body(run):
        run.evidence_override = ("",)
    return _tampered(ctx, t0, "qr", "tampered/R3/evidence-is-an-empty-string", body)


def t_delegations_string(ctx, t0):
    run = Run(ctx, "ds", t0, "tampered/D1+D2/delegations-is-a-string", origin="tampered-copy")
    built, children = ds(run, keys=["hw"])
    run.delegations_override = ("see log",)
    c = children[0]
    for r in run.refs:
        if r.sid == f"invocation:{c.iid}":
            r.tags.add("D1")
    for ev in run.evidence:
        if ev.item["source_id"] == f"invocation:{c.iid}":
            ev.tags.add("D2")
    return built + [run.finish()]


def t_payload_not_succeeded(ctx, t0):
    def body(run):
        run.status, run.reason_code, run.statement = "abstained", "no_qualifying_resource", "Abstained."
        rec = ctx.rng.choice(pools().fs)
        run.refs.append(Ref(rec.sid, rec.chash, {"G2", "G4"}) if rec.chash not in
                        {e.item["content_hash"] for e in run.evidence} else Ref(rec.sid, rec.chash))
    return _tampered(ctx, t0, "r3", "tampered/G2/payload-on-abstained-envelope", body)


def t_offsets(ctx, t0):
    """Span times with a -03:00 offset: compared as UTC instants (docs/rules.md#span-records)."""

    def local(us):
        return ts(us - 3 * 3600 * 1_000_000)[:-1] + "-03:00"

    def body(run):
        early = ctx.rng.random() < 0.5
        first = next(s for s in run.spans if s.name == "retrieval")
        start = first.end - 3 if early else first.end + 1
        sp = run.chat(start=start, dur=500)
        sp.start, sp.end = local(start), local(start + 500)
        sp.early = early
    return _tampered(ctx, t0, "r3", "tampered/G1/span-times-with-utc-offset", body)


VIOLATIONS = [
    v_two_roots, v_sets_keys, v_foreign_trace, v_orphan, v_payload_shape_withheld, v_e1_altered, v_e1_canon,
    v_e1_input, v_g1_early, v_g1_none_abstained, v_g2_unknown_sid, v_g2_wrong_hash, v_g2_nothing, v_g3, v_g4,
    v_g4_none, v_r1, v_r1_ds, v_r2_payload, v_r2_evidence, v_r2_wrong_input, v_r2_other_input, v_r3, v_n1, v_d1, v_d2,
    v_d3, v_d1_g4, v_d1_d2, v_everything_retrieval, v_g2_g3_identity, v_none_everything, v_e1_g3, v_g0_n1,
    v_s1, v_s2_rehashed, v_s2_canon, v_s1_s2, v_g3_s1, v_abstained_g3_s1, v_referred_r2, v_abstained_d2,
    v_child_withheld, v_none_dup_retrieval, s_duplicate_chat, v_gw3, v_gw4,
    t_cycle, t_missing_time, t_no_root, t_mode_differs, t_unknown_mode, t_missing_mode, t_mode_list,
    t_root_no_mode, t_root_no_input_hash, t_no_iid, t_payload_not_object, t_payload_lacks_class, t_payload_empty,
    t_grounded_not_list, t_malformed_ref, t_content_not_object, t_evidence_empty_string, t_delegations_string,
    t_payload_not_succeeded, t_offsets,
]


# Folders each scenario writes: an int, or "ds" = 1 + the planned number of children.
SIZES = {f: 1 for f, _ in CLEAN}
SIZES.update({f: 1 for f in VIOLATIONS})
SIZES.update({s_pass_ds: "ds", v_r1_ds: 2, v_d1: 2, v_d2: 2, v_d3: 2, v_d1_g4: 2, v_child_withheld: 2,
              v_gw3: 2, v_gw4: 1, t_delegations_string: 2})
