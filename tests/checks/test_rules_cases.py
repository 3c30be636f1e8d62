"""Per-rule cases: tests/rules/<STEM>/{pass,fail}_*.json, one folder per rule file of sql/rules/
(named by its stem: G1/, G0_tree/, S1/), each case a small run loaded through the real ingest
(ingest.load_single) and checked with every rule: linted for the lint rules, source-checked
(verify) against the sources.yaml the case provides for the source rules. The layout and the case
format are described in tests/rules/README.md.

A case file holds ``mode``, ``spans`` (compact span records, see ``span_line``), ``envelope``
(keys merged into a default succeeded envelope; ``$drop`` lists keys to remove) and ``expect``:
the exact messages the workbench reports under the rule's code, in order (empty for pass_
cases). Optional: ``report`` (exact grounding.txt), ``status``, ``root_attrs`` / ``root_raw``
(changes to the invoke_agent span; an attribute set to null is removed), ``children`` (runs
loaded beside it, for delegation findings). A source-rule case adds ``sources`` (the copies its
sources.yaml lists, see ``write_sources``) and ``report`` is its exact sources.txt; for S0,
``expect`` is the unresolved items. Expected texts were written by hand from docs/rules.md (the
workbench's behaviour), never produced by groundwork.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import groundwork.ingest as ingest
from groundwork.checks import rules
from groundwork.checks.lint import lint_warehouse
from groundwork.checks.verify import verify_warehouse
from groundwork.core.warehouse import connect

CASES_DIR = Path(__file__).parent.parent / "rules"
CASES = sorted(CASES_DIR.glob("*/*.json"))
RULES = {rule.stem: rule for rule in rules.load_rules(kinds=rules.KINDS)}  # folder name -> rule file
LINT_KEYS = {"about", "mode", "spans", "envelope", "expect"}
SOURCE_KEYS = {"about", "mode", "envelope", "sources", "expect", "report"}
INV = "01a06cdb-985f-7375-9aa2-37be29f0f2a8"
BASE = datetime(2026, 11, 30, 2, 0, 0, tzinfo=timezone.utc)


def _time(offset_us: int, tz: str | None = None) -> str:
    moment = BASE + timedelta(microseconds=offset_us)
    if not tz:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    sign = 1 if tz[0] == "+" else -1
    hours, minutes = int(tz[1:3]), int(tz[4:6])
    local = moment.astimezone(timezone(sign * timedelta(hours=hours, minutes=minutes)))
    return local.strftime("%Y-%m-%dT%H:%M:%S.%f") + tz


def span_line(s: dict) -> dict:
    """An OpenTelemetry SDK to_json span object (docs/rules.md#spans) from a compact record."""
    line = {
        "name": s["name"],
        "context": {"trace_id": "0x" + s.get("trace", "t"), "span_id": "0x" + s["id"], "trace_state": "[]"},
        "kind": "SpanKind.INTERNAL",
        "parent_id": None if s.get("parent") is None else "0x" + s["parent"],
        "start_time": _time(s.get("start", 10), s.get("start_offset")),
        "end_time": _time(s.get("end", 15)),
        "status": {"status_code": "UNSET"},
        "attributes": s.get("attrs", {"dd.operation": s["name"]}),
        "events": [],
        "links": [],
        "resource": {"attributes": {"service.name": "test"}, "schema_url": ""},
    }
    line.update(s.get("raw", {}))
    return line


def write_run(folder: Path, case: dict) -> tuple[Path, Path]:
    folder.mkdir(parents=True)
    mode = case["mode"]
    spans = list(case.get("spans", []))
    if case.get("root", True):
        attrs = {"dd.operation": "invoke_agent", "dd.agent_id": "a", "dd.grounding_mode": mode,
                 "dd.input_hash": "1" * 64, "dd.outcome": "succeeded"}
        for key, value in case.get("root_attrs", {}).items():
            if value is None:
                attrs.pop(key, None)
            else:
                attrs[key] = value
        spans.insert(0, {"name": "invoke_agent", "id": "root", "parent": None, "start": 0, "end": 100,
                         "attrs": attrs, "raw": case.get("root_raw", {})})
    envelope = {"invocation_id": INV, "agent_id": "a", "grounding_mode": mode,
                "outcome": {"status": "succeeded"}, "evidence": []}
    overrides = dict(case.get("envelope", {}))
    drop = overrides.pop("$drop", [])
    envelope.update(overrides)
    for key in drop:
        envelope.pop(key, None)
    spans_path, envelope_path = folder / "spans.jsonl", folder / "envelope.json"
    spans_path.write_text("".join(json.dumps(span_line(s)) + "\n" for s in spans), encoding="utf-8")
    # as the workbench writes it: json.dumps(doc, indent=2), every non-ASCII character escaped (lone surrogates too)
    envelope_path.write_text(json.dumps(envelope, indent=2), encoding="ascii")
    return spans_path, envelope_path


def write_sources(folder: Path, copies: list[dict]) -> Path:
    """A sources.yaml pinning one data file per copy: ``snapshot_refs``, ``id_field`` and either
    ``records`` (written as JSON Lines, one compact object a line) or ``data`` (the file's exact
    text); the pin is the SHA-256 of the bytes written, so every copy loads."""
    entries = []
    for i, copy in enumerate(copies):
        text = copy["data"] if "data" in copy else "".join(json.dumps(r) + "\n" for r in copy["records"])
        data = text.encode("utf-8")
        (folder / f"copy{i}.data").write_bytes(data)
        entries.append({"snapshot_refs": copy["snapshot_refs"], "path": f"copy{i}.data",
                        "id_field": copy["id_field"], "sha256": hashlib.sha256(data).hexdigest()})
    path = folder / "sources.yaml"
    path.write_text(json.dumps({"sources": entries}), encoding="utf-8")  # JSON is YAML
    return path


def lint_case(case: dict, code: str, tmp_path: Path) -> None:
    con = connect(":memory:")
    try:
        for i, child in enumerate(case.get("children", [])):
            ingest.load_single(con, *write_run(tmp_path / f"child{i}", child))
        key = ingest.load_single(con, *write_run(tmp_path / "run", case))
        verdict = lint_warehouse(con, record=False).by_id()[key]
    finally:
        con.close()
    reported = [m for c, m in zip(verdict.codes, verdict.violations) if c == code]
    reported += [m for c, m in verdict.findings if c == code]
    assert reported == case["expect"], case["about"]
    if "report" in case:
        assert verdict.grounding_txt == case["report"]
    if "status" in case:
        assert verdict.status == case["status"]


def source_case(case: dict, code: str, tmp_path: Path) -> None:
    """The source check (docs/rules.md#S0, #S1, #S2) of the case's run against its copies."""
    sources = write_sources(tmp_path, case["sources"])
    con = connect(":memory:")
    try:
        ingest.load_single(con, *write_run(tmp_path / "run", case))
        [verdict] = verify_warehouse(con, sources, record=False).runs
    finally:
        con.close()
    if code == "S0":  # unresolved items: never a violation, listed in sources.txt
        reported = verdict.unresolved
    else:
        reported = [m for c, m in zip(verdict.codes, verdict.violations) if c == code]
    assert reported == case["expect"], case["about"]
    assert verdict.text == case["report"], case["about"]


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_case(path: Path, tmp_path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    rule = RULES[path.parent.name]
    if rule.kind == "source":
        source_case(case, rule.code, tmp_path)
    else:
        lint_case(case, rule.code, tmp_path)


def test_every_case_file_is_named_and_shaped_as_a_case() -> None:
    assert CASES, "no rule cases found"
    for path in CASES:
        case = json.loads(path.read_text(encoding="utf-8"))
        rule = RULES.get(path.parent.name)
        assert rule is not None, f"{path}: tests/rules/<folder> must be named after a file of sql/rules/"
        assert path.stem.startswith(("pass_", "fail_")), path
        assert set(case) >= (SOURCE_KEYS if rule.kind == "source" else LINT_KEYS), path
        assert bool(case["expect"]) == path.stem.startswith("fail_"), f"{path}: fail_ cases expect messages, pass_ cases none"
