"""envelope.json / request.json documents -> runs columns, payload_refs, evidence, delegations.

Pure functions over parsed JSON. The str()/repr conventions are those of sql/schema/10_tables.sql's
column comments (docs/rules.md#str, docs/rules.md#derived-relations, docs/rules.md#grounded-references, docs/rules.md#repr, docs/rules.md#evidence-pairs, docs/rules.md#citable-set, docs/rules.md#unverifiable-runs, docs/rules.md#truthiness, docs/rules.md#early-stops).
"""

from __future__ import annotations

import re

from groundwork.core.canonical import CanonicalisationError, content_hash, content_hash_or_none

from groundwork.ingest import issues as K
from groundwork.ingest.issues import Issues
from groundwork.core.jsontext import dumps, dumps_doc, iso_to_us_opt, json_type, vstr

MODES = ("retrieval", "input_only", "none", "delegation")
WITHHELD_TYPE = "https://w3id.org/data-director/problems/grounding-violation"

# envelope_columns()' keys in its order (the C path returns their values as a tuple in this order)
ENVELOPE_COLUMNS = ("envelope_invocation_id", "agent_id", "agent_version", "completed_at", "grounding_mode",
                    "grounding_mode_json", "grounding_mode_truthy", "outcome_status", "succeeded", "problem_type",
                    "withheld", "payload_type", "payload_has_schema_class", "payload_schema_class_json",
                    "payload_has_grounded_on", "evidence_count", "delegation_count", "conversation_id",
                    "parent_invocation_id", "telemetry_trace_id", "envelope_hash", "envelope_json")
# The columns of the rows below, in the order their tuples hold them (the C path builds its rows in
# the same order, told at load); they go into their tables by these names (tables.to_arrow).
PAYLOAD_FIELDS = ("invocation_id", "ord", "path", "kind", "source_id", "content_hash", "value_json")
EVIDENCE_FIELDS = ("invocation_id", "ord", "source_id", "source_id_json", "content_hash", "canonicalisation",
                   "canonicalisation_json", "snapshot_ref", "source_uri", "retrieved_at", "hash_algorithm",
                   "content_type", "content_json", "computed_hash", "canonical_error", "item_type", "item_json",
                   "snapshot_ref_json")
DELEGATION_FIELDS = ("invocation_id", "ord", "delegated_invocation_id", "content_hash", "delegated_agent_id",
                     "delegated_agent_version", "delegated_status")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _opt(doc: dict, key: str):
    """vstr() of doc[key], or None when the key is absent."""
    return vstr(doc[key]) if key in doc else None


def _opt_nonnull(doc: dict, key: str):
    """vstr() of doc[key], or None when absent or JSON null."""
    v = doc.get(key)
    return None if v is None else vstr(v)


def envelope_columns(env, inv: str, path: str, issues: Issues, folder_name: str | None, fast: bool = False) -> dict:
    """runs columns derived from the envelope; records crash conditions in ``issues``: an envelope
    that is not an object crashes both checks wherever they stop; a truthy non-object ``outcome``,
    non-list ``evidence`` or non-object evidence element and a non-iterable ``delegations`` crash the
    linter only where it reads them (``lint_if_read``: lint decides, docs/rules.md#early-stops),
    while the source check reads the evidence and the mode of every envelope
    (docs/rules.md#unverifiable-runs)."""
    cols: dict = {}
    if not isinstance(env, dict):
        issues.add(path, None, K.WRONG_TYPE, f"envelope is a JSON {json_type(env) or 'null'}, not an object",
                   lint=True, verify=True)
        cols["envelope_hash"] = content_hash_or_none("dd-envelope-json-v1", env, fast)   # GW3's, groundwork's own
        cols["envelope_json"] = dumps_doc(env, fast)
        cols["evidence_count"] = 0
        cols["delegation_count"] = 0
        return cols
    raw_id = env.get("invocation_id")
    cols["envelope_invocation_id"] = vstr(raw_id)
    if folder_name is not None and raw_id != folder_name:
        issues.add(path, None, K.NAME_MISMATCH,
                   f"folder name {folder_name!r} differs from the envelope's invocation_id {cols['envelope_invocation_id']!r}")
    cols["agent_id"] = _opt_nonnull(env, "agent_id")
    cols["agent_version"] = _opt_nonnull(env, "agent_version")
    cols["completed_at"] = iso_to_us_opt(env.get("completed_at"))
    mode = env.get("grounding_mode")
    cols["grounding_mode"] = None if mode is None else vstr(mode)
    cols["grounding_mode_json"] = dumps(mode, fast)
    cols["grounding_mode_truthy"] = bool(mode)
    if isinstance(mode, (list, dict)):  # docs/rules.md#unverifiable-runs: the source check hashes the mode
        issues.add(path, None, K.WRONG_TYPE,
                   f"grounding_mode is a JSON {json_type(mode)}; the workbench source check would crash on it",
                   verify=True)
    outcome = env.get("outcome")
    if isinstance(outcome, dict):
        cols["outcome_status"] = _opt(outcome, "status")
        cols["succeeded"] = outcome.get("status") == "succeeded"
    else:
        cols["outcome_status"] = None
        cols["succeeded"] = False
        if outcome:  # K6: a falsy outcome reads as "not succeeded"; a truthy non-object crashes where it is read
            issues.add(path, None, K.WRONG_TYPE, f"outcome is a JSON {json_type(outcome)}, not an object",
                       lint_if_read="outcome")
    problem = env.get("problem")
    cols["problem_type"] = _opt(problem, "type") if isinstance(problem, dict) else None
    cols["withheld"] = isinstance(problem, dict) and problem.get("type") == WITHHELD_TYPE
    payload = env.get("payload")
    cols["payload_type"] = json_type(payload)
    is_obj = isinstance(payload, dict)
    cols["payload_has_schema_class"] = is_obj and "schema_class" in payload
    cols["payload_schema_class_json"] = dumps(payload["schema_class"], fast) if cols["payload_has_schema_class"] else None
    cols["payload_has_grounded_on"] = is_obj and "grounded_on" in payload
    evidence = env.get("evidence")
    if not evidence:  # C2: absent, null or any falsy value = no evidence
        cols["evidence_count"] = 0
    elif isinstance(evidence, list):
        cols["evidence_count"] = len(evidence)
        for i, ev in enumerate(evidence):
            if not isinstance(ev, dict):
                issues.add(path, None, K.WRONG_TYPE,
                           f"evidence[{i}] is a JSON {json_type(ev) or 'null'}, not an object",
                           verify=True, lint_if_read="evidence")
    else:
        cols["evidence_count"] = 0
        issues.add(path, None, K.WRONG_TYPE,
                   f"evidence is a non-empty JSON {json_type(evidence)}, not a list", verify=True, lint_if_read="evidence")
    delegations = env.get("delegations")
    if isinstance(delegations, list):
        cols["delegation_count"] = sum(1 for d in delegations if isinstance(d, dict))
    else:
        cols["delegation_count"] = 0
        if delegations and not isinstance(delegations, (str, dict)):  # C3: strings/objects iterate
            issues.add(path, None, K.WRONG_TYPE,
                       f"delegations is a JSON {json_type(delegations)}, which cannot be iterated",
                       lint_if_read="delegations")
    cols["conversation_id"] = _opt_nonnull(env, "conversation_id")
    cols["parent_invocation_id"] = _opt_nonnull(env, "parent_invocation_id")
    telemetry = env.get("telemetry")
    cols["telemetry_trace_id"] = _opt_nonnull(telemetry, "trace_id") if isinstance(telemetry, dict) else None
    cols["envelope_hash"] = content_hash_or_none("dd-envelope-json-v1", env, fast)   # GW3's, groundwork's own
    cols["envelope_json"] = dumps_doc(env, fast)
    return cols


def payload_rows(env, inv: str, fast: bool = False) -> list[tuple]:
    """payload_refs rows (PAYLOAD_FIELDS): the recursive walk of docs/rules.md#grounded-references in discovery order."""
    if not isinstance(env, dict) or env.get("payload") is None:
        return []
    rows: list[tuple] = []
    for path, value in grounded_on_values(env["payload"], "$"):
        if not isinstance(value, list):
            rows.append((inv, len(rows), path, "not_list", None, None, dumps(value, fast)))
            continue
        for i, el in enumerate(value):
            p = f"{path}[{i}]"
            if isinstance(el, dict) and isinstance(el.get("source_id"), str) and isinstance(el.get("content_hash"), str):
                rows.append((inv, len(rows), p, "ref", vstr(el["source_id"]), vstr(el["content_hash"]), dumps(el, fast)))
            else:
                rows.append((inv, len(rows), p, "malformed", None, None, dumps(el, fast)))
    return rows


def _key_path(path: str, key: str) -> str:
    if _IDENT.match(key):
        return f"{path}.{key}"
    return f"{path}[{dumps(key)}]"


def grounded_on_values(value, path: str):
    """Yield (jsonpath, value) for every value under a ``grounded_on`` key, document order,
    not descending into those values (docs/rules.md#grounded-references). Iterative, so deep payloads cannot overflow."""
    stack = [(False, value, path)]
    while stack:
        found, node, p = stack.pop()
        if found:
            yield p, node
        elif isinstance(node, dict):
            # scalars other than grounded_on values yield nothing: not stacked (nor their paths built)
            for key, item in reversed(list(node.items())):
                if key == "grounded_on":
                    stack.append((True, item, _key_path(p, key)))
                elif isinstance(item, (dict, list)):
                    stack.append((False, item, _key_path(p, key)))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                if isinstance(node[i], (dict, list)):
                    stack.append((False, node[i], f"{p}[{i}]"))


def evidence_rows(env, inv: str, fast: bool = False, issues: Issues | None = None, path: str = "") -> list[tuple]:
    """evidence rows (EVIDENCE_FIELDS): every element of a list-valued evidence, in order, with the content hash
    recomputed under the element's canonicalisation (docs/rules.md#canonical-json, docs/rules.md#e1)."""
    if not isinstance(env, dict):
        return []
    evidence = env.get("evidence")
    if not evidence or not isinstance(evidence, list):
        return []
    rows = []
    for i, ev in enumerate(evidence):
        if not isinstance(ev, dict):
            rows.append((inv, i, None, None, None, None, None, None, None, None, None, None, None, None, None,
                         json_type(ev) or "null", dumps(ev, fast), None))
            continue
        canon = ev.get("canonicalisation")
        has_content = "content" in ev and ev["content"] is not None
        content = ev.get("content")
        computed = error = None
        if isinstance(content, dict):
            try:
                computed = content_hash(canon, content, fast)
            except CanonicalisationError as exc:
                error = vstr(str(exc))
            except RecursionError:  # E1's json.dumps raises, the workbench's too: it crashes where E1 reads it
                if issues is not None:
                    issues.add(path, None, K.MALFORMED_JSON,
                               f"evidence[{i}].content is nested too deeply for json.dumps to hash "
                               "(maximum recursion depth exceeded); the workbench's E1 would crash on it",
                               lint_if_read="evidence")
        rows.append((
            inv, i,
            vstr(ev.get("source_id")), dumps(ev.get("source_id"), fast),
            vstr(ev.get("content_hash")),
            vstr(canon), dumps(canon, fast),
            vstr(ev.get("snapshot_ref")),
            _opt(ev, "source_uri"), _opt(ev, "retrieved_at"), _opt(ev, "hash_algorithm"),
            json_type(content) if has_content else None,
            dumps_doc(content, fast) if has_content else None,
            computed, error,
            "object", dumps(ev, fast), dumps(ev.get("snapshot_ref"), fast),
        ))
    return rows


def delegation_rows(env, inv: str) -> list[tuple]:
    """delegations rows (DELEGATION_FIELDS): object elements of a list-valued delegations (docs/rules.md#delegations, docs/rules.md#citable-set)."""
    if not isinstance(env, dict):
        return []
    delegations = env.get("delegations")
    if not isinstance(delegations, list):
        return []
    return [(inv, i, vstr(d.get("delegated_invocation_id")), vstr(d.get("content_hash")),
             _opt(d, "delegated_agent_id"), _opt(d, "delegated_agent_version"), _opt(d, "delegated_status"))
            for i, d in enumerate(delegations) if isinstance(d, dict)]


def request_columns(req, path: str, issues: Issues, fast: bool = False) -> dict:
    """input_hash (docs/rules.md#input-hash), issued_at and the stored request document."""
    cols = {"request_json": dumps_doc(req, fast), "input_hash": None, "issued_at": None}
    if not isinstance(req, dict):
        issues.add(path, None, K.WRONG_TYPE, f"request is a JSON {json_type(req) or 'null'}, not an object")
        return cols
    if "input" not in req:
        issues.add(path, None, K.MISSING_KEY, "request lacks the key 'input'; the input hash cannot be computed")
    else:
        # None for a lone surrogate (recorded as lone-surrogate by the reader) or a value nested
        # too deep for json.dumps: no check reads request.json
        cols["input_hash"] = content_hash_or_none("dd-input-json-v1", req["input"], fast)
    cols["issued_at"] = iso_to_us_opt(req.get("issued_at"))
    return cols
