"""Per-rule cases: tests/rules/<CODE>/{pass,fail}_*.json, each a small run loaded through the real
ingest (ingest.load_single) and linted with every rule.

A case file holds ``mode``, ``spans`` (compact span records, see ``span_line``), ``envelope``
(keys merged into a default succeeded envelope; ``$drop`` lists keys to remove) and ``expect``:
the exact messages the workbench reports under the folder's code, in order (empty for pass_
cases). Optional: ``report`` (exact grounding.txt), ``status``, ``root_attrs`` / ``root_raw``
(changes to the invoke_agent span; an attribute set to null is removed), ``children`` (runs
loaded beside it, for delegation findings). Expected texts were written by hand from spec 6.3
and Appendix A, never produced by groundwork.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import groundwork.ingest as ingest
from groundwork.checks.lint import lint_warehouse
from groundwork.core.warehouse import connect

CASES_DIR = Path(__file__).parent.parent / "rules"
CASES = sorted(CASES_DIR.glob("*/*.json"))
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
    """An OpenTelemetry SDK to_json span object (spec 2.1) from a compact record."""
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
    envelope_path.write_text(json.dumps(envelope, indent=2, ensure_ascii=False), encoding="utf-8")
    return spans_path, envelope_path


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_case(path: Path, tmp_path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    code = path.parent.name
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


def test_every_case_file_is_named_and_shaped_as_a_case() -> None:
    assert CASES, "no rule cases found"
    for path in CASES:
        case = json.loads(path.read_text(encoding="utf-8"))
        assert path.stem.startswith(("pass_", "fail_")), path
        assert set(case) >= {"about", "mode", "spans", "envelope", "expect"}, path
        assert bool(case["expect"]) == path.stem.startswith("fail_"), f"{path}: fail_ cases expect messages, pass_ cases none"
