"""OTLP/JSON span lines (Collector file exporter: one TracesData per line) give the same span rows
as the workbench's own OpenTelemetry-SDK to_json lines."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone

import pytest

from ingest_support import archive, ingest, issues, rows, run_row, span_lines

SCENARIOS = ["pass/retrieval/two-sources-and-chat", "pass/delegation/three-children-and-chat",
             "violation/G0/span-in-foreign-trace", "combo/G0+N1/chat-span-sets-input-hash"]


def any_value(v):
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [any_value(x) for x in v]}}
    return {"stringValue": v}


def kv(d: dict) -> list:
    return [{"key": k, "value": any_value(v)} for k, v in d.items()]


def nanos(iso: str) -> str:
    t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    delta = t - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return str(((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000)


def otlp_span(sdk: dict, b64_ids: bool = False) -> dict:
    def ident(h):
        h = h[2:]
        return base64.b64encode(bytes.fromhex(h)).decode() if b64_ids else h.upper()
    span = {
        "traceId": ident(sdk["context"]["trace_id"]),
        "spanId": ident(sdk["context"]["span_id"]),
        "parentSpanId": ident(sdk["parent_id"]) if sdk["parent_id"] else "",
        "name": sdk["name"],
        "kind": 1,
        "startTimeUnixNano": nanos(sdk["start_time"]),
        "endTimeUnixNano": nanos(sdk["end_time"]),
        "attributes": kv(sdk["attributes"]),
        "status": {"code": {"UNSET": 0, "OK": 1, "ERROR": 2}[sdk["status"]["status_code"]]},
    }
    return span


def traces_data(sdk_lines: list[dict], b64_ids: bool = False) -> dict:
    return {"resourceSpans": [{
        "resource": {"attributes": kv(line["resource"]["attributes"])},
        "scopeSpans": [{"scope": {"name": "dd_sdk"}, "spans": [otlp_span(line, b64_ids)]}],
    } for line in sdk_lines]}


COMPARED = ("ord", "name", "name_json", "span_id", "trace_id", "parent_id", "start_time", "end_time",
            "dd_operation", "dd_agent_id", "dd_source_id", "dd_content_hash", "dd_model_id", "dd_input_tokens",
            "dd_output_tokens", "dd_outcome", "dd_grounding_mode", "dd_input_hash", "dd_grounding_mode_json",
            "dd_grounding_mode_is_string", "status_code", "service_name", "attributes", "start_unix_nano",
            "end_unix_nano")


def span_rows(con, inv):
    return [{k: r[k] for k in COMPARED} for r in rows(con, "SELECT * FROM spans WHERE invocation_id = ? ORDER BY ord", [inv])]


@pytest.mark.parametrize("layout", ["line-per-span", "one-batch", "base64-ids"])
def test_otlp_rendering_of_corpus_runs_gives_the_same_span_rows(tmp_path, layout):
    sdk_runs, ids = archive(tmp_path / "sdk", *SCENARIOS)
    otlp_runs, _ = archive(tmp_path / "otlp", *SCENARIOS)
    for inv in ids:
        docs = span_lines(otlp_runs / inv)
        if layout == "one-batch":
            text = json.dumps(traces_data(docs)) + "\n"
        else:
            text = "".join(json.dumps(traces_data([d], layout == "base64-ids")) + "\n" for d in docs)
        (otlp_runs / inv / "spans.jsonl").write_text(text)
    sdk, _ = ingest(sdk_runs)
    otlp, result = ingest(otlp_runs)
    assert issues(otlp) == [] and result.exit_code == 0
    for inv in ids:
        assert span_rows(otlp, inv) == span_rows(sdk, inv)
        assert run_row(otlp, inv)["span_format"] == "otlp"
        assert run_row(otlp, inv)["lintable"] is True
        formats = {f for (f,) in otlp.execute("SELECT DISTINCT source_format FROM spans WHERE invocation_id = ?", [inv]).fetchall()}
        assert formats == {"otlp"}
        lines = [n for (n,) in otlp.execute("SELECT line_no FROM spans WHERE invocation_id = ? ORDER BY ord", [inv]).fetchall()]
        assert lines == ([1] * len(lines) if layout == "one-batch" else list(range(1, len(lines) + 1)))


def test_mixed_file_and_otlp_sub_microsecond_times(tmp_path):
    runs, (inv,) = archive(tmp_path, "pass/retrieval/one-source")
    docs = span_lines(runs / inv)
    batch = traces_data(docs[2:])
    batch["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = "1796004366116684999"
    (runs / inv / "spans.jsonl").write_text(json.dumps(docs[0]) + "\n" + json.dumps(docs[1]) + "\n" + json.dumps(batch) + "\n")
    con, _ = ingest(runs)
    assert run_row(con, inv)["span_format"] == "mixed"
    # the workbench reads the OTLP line as one of its own and crashes: no verdict (it once had one)
    assert issues(con) == [("missing-key", f"{inv}/spans.jsonl", 3, "unlintable")]
    assert run_row(con, inv)["lintable"] is False
    (start_ns, start) = con.execute("SELECT start_unix_nano, strftime(start_time, '%H:%M:%S.%f') FROM spans "
                                    "WHERE invocation_id = ? AND line_no = 3", [inv]).fetchall()[0]
    assert (start_ns, start) == (1796004366116684999, "02:06:06.116684")


def test_otlp_span_missing_required_fields_is_unlintable(tmp_path):
    runs, (inv,) = archive(tmp_path, "pass/retrieval/one-source")
    docs = span_lines(runs / inv)
    batch = traces_data(docs)
    del batch["resourceSpans"][1]["scopeSpans"][0]["spans"][0]["spanId"]
    batch["resourceSpans"][2]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = "soon"
    (runs / inv / "spans.jsonl").write_text(json.dumps(batch) + "\n")
    con, _ = ingest(runs)
    assert issues(con) == [("bad-time", f"{inv}/spans.jsonl", 1, "unlintable"),
                           ("missing-key", f"{inv}/spans.jsonl", 1, "unlintable")]
    assert run_row(con, inv)["lintable"] is False
