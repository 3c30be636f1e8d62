"""`groundwork drift`: historical evidence verified against an old copy that a newer copy no longer matches.

The oracle is the independent reference source check (tests/reference/sources.py): an item has
drifted when it verifies against the old copy and, re-pointed at the new copy, gives S1 (record
gone) or S2 (record changed).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

import groundwork.ingest as ingest
from groundwork.checks.drift import drift
from groundwork.core.warehouse import connect
from cli_support import run_cli
from reference import sources as refsrc

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
OLD, NEW, SAME = "snapshot:corpus-records-v1", "snapshot:corpus-records-v2", "snapshot:corpus-records-copy"



@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Corpus warehouse + a sources.yaml with the old copy, a newer one (src:a changed, src:c gone,
    src:e added) and a byte-identical copy under another ref."""
    tmp = tmp_path_factory.mktemp("drift")
    shutil.copytree(CORPUS / "snapshots", tmp / "snapshots")
    old_lines = (tmp / "snapshots" / "records.jsonl").read_text("utf-8").splitlines()
    new_lines = []
    for line in old_lines:
        rec = json.loads(line)
        if rec["source_id"] == "src:a":
            rec["text"] = "Alpha, revised."
        if rec["source_id"] == "src:c":
            continue
        new_lines.append(json.dumps(rec, ensure_ascii=False))
    new_lines.append(json.dumps({"source_id": "src:e", "text": "Epsilon."}))
    (tmp / "snapshots" / "records-v2.jsonl").write_text("\n".join(new_lines) + "\n", encoding="utf-8")
    shutil.copy(tmp / "snapshots" / "records.jsonl", tmp / "snapshots" / "records-copy.jsonl")

    def entry(refs, path, id_field):
        pin = hashlib.sha256((tmp / path).read_bytes()).hexdigest()
        return {"snapshot_refs": refs, "path": path, "id_field": id_field, "sha256": pin}

    cfg = tmp / "sources.yaml"
    cfg.write_text(json.dumps({"sources": [
        entry([OLD], "snapshots/records.jsonl", "source_id"),
        entry(["snapshot:corpus-fairsharing-v1"], "snapshots/fairsharing.json", "fairsharing_id"),
        entry([NEW], "snapshots/records-v2.jsonl", "source_id"),
        entry([SAME], "snapshots/records-copy.jsonl", "source_id"),
    ]}), encoding="utf-8")
    wh = tmp / "w.duckdb"
    con = connect(wh)
    ingest.ingest_archive(con, CORPUS / "runs", workers=0)
    con.close()
    return cfg, wh


def oracle(cfg: Path) -> list[tuple]:
    """(invocation_id, ord, source_id, status, agent_id) of every drifted item, by the reference check."""
    copies = refsrc.load_sources(cfg)
    out = []
    for run in sorted((CORPUS / "runs").iterdir()):
        if not run.is_dir():
            continue
        env = json.loads((run / "envelope.json").read_text("utf-8"))
        for ord_, ev in enumerate(env.get("evidence") or []):
            if str(ev.get("snapshot_ref")) != OLD:
                continue
            one = {"grounding_mode": env.get("grounding_mode"), "evidence": [ev]}
            if refsrc.check(one, copies).verified != 1:
                continue
            again = refsrc.check({**one, "evidence": [{**ev, "snapshot_ref": NEW}]}, copies)
            if again.violations:
                status = {"S1": "gone", "S2": "changed"}[again.violations[0][:2]]
                out.append((run.name, ord_, str(ev.get("source_id")), status, env.get("agent_id")))
    return out


def test_drifted_items_match_the_reference_check(setup):
    cfg, wh = setup
    con = connect(wh)
    result = drift(con, cfg, OLD, NEW)
    con.close()
    expected = oracle(cfg)
    assert {s for *_, s, _ in expected} == {"changed", "gone"}  # the fixture exercises both
    assert [(i["invocation_id"], i["ord"], i["source_id"], i["status"], i["agent_id"]) for i in result.items] == expected
    s = result.source
    assert (s["drifted_items"], s["changed"], s["gone"]) == (
        len(expected), sum(1 for e in expected if e[3] == "changed"), sum(1 for e in expected if e[3] == "gone"))
    assert s["drifted_runs"] == len({e[0] for e in expected})
    assert (s["records_changed"], s["records_gone"], s["records_added"]) == (1, 1, 1)
    assert (s["from_records"], s["to_records"]) == (4, 4)
    by_agent = Counter(e[4] for e in expected)
    assert {a["agent_id"]: a["item_count"] for a in result.by_agent} == dict(by_agent)
    by_run = Counter(e[0] for e in expected)
    assert {r["invocation_id"]: r["item_count"] for r in result.by_run} == dict(by_run)


def test_identical_copy_under_another_ref_has_no_drift(setup, monkeypatch, capsys):
    cfg, wh = setup
    code, out, _ = run_cli(monkeypatch, capsys, "drift", "-w", str(wh), "--sources", str(cfg),
                           "--from", OLD, "--to", SAME)
    assert code == 0
    assert "no longer matching snapshot:corpus-records-copy: 0 items (0 changed, 0 gone) in 0 runs" in out


def test_cli_formats_and_exit_1(setup, monkeypatch, capsys):
    cfg, wh = setup
    expected = oracle(cfg)
    code, out, _ = run_cli(monkeypatch, capsys, "drift", "-w", str(wh), "--sources", str(cfg),
                           "--from", OLD, "--to", NEW, "--format", "jsonl")
    assert code == 1
    items = [json.loads(line) for line in out.splitlines()]
    assert [(i["invocation_id"], i["ord"], i["status"]) for i in items] == [(e[0], e[1], e[3]) for e in expected]
    code, out, _ = run_cli(monkeypatch, capsys, "drift", "-w", str(wh), "--sources", str(cfg),
                           "--from", OLD, "--to", NEW)
    assert code == 1
    for inv, *_ in expected:
        assert f"  {inv} [" in out
    code, out, _ = run_cli(monkeypatch, capsys, "drift", "-w", str(wh), "--sources", str(cfg),
                           "--from", OLD, "--to", NEW, "--format", "markdown")
    assert code == 1
    assert "## By agent" in out and "## By run" in out
    assert out.count("\n| ") >= len({e[0] for e in expected}) + len({e[4] for e in expected})


def test_unknown_ref_is_exit_2(setup, monkeypatch, capsys):
    cfg, wh = setup
    code, out, err = run_cli(monkeypatch, capsys, "drift", "-w", str(wh), "--sources", str(cfg),
                             "--from", "snapshot:nope", "--to", NEW)
    assert code == 2 and out == ""
    assert err == f"groundwork: error: {cfg}: no source lists snapshot_ref 'snapshot:nope' (given as --from)\n"


def test_text_and_markdown_show_control_characters_never_send_them(setup, tmp_path, monkeypatch, capsys):
    # a run's agent id reaches the terminal through the text form: an escape sequence or a
    # newline must be shown, not acted on (they were printed raw)
    cfg, wh = setup
    copy = tmp_path / "w.duckdb"
    shutil.copyfile(wh, copy)
    con = connect(copy)
    con.execute("UPDATE runs SET agent_id = 'evil' || chr(27) || '[31m' || chr(10) || 'by agent:' WHERE agent_id IS NOT NULL")
    con.close()
    for fmt in ("text", "markdown"):
        code, out, _ = run_cli(monkeypatch, capsys, "drift", "-w", str(copy), "--sources", str(cfg),
                               "--from", OLD, "--to", NEW, "--format", fmt)
        assert code == 1
        assert "\x1b" not in out and "evil" in out
        assert [x for x in out.splitlines() if x.startswith("by agent:")] == (["by agent:"] if fmt == "text" else []), out
    assert "  evil\\x1b[31m\\x0aby agent:: " in run_cli(monkeypatch, capsys, "drift", "-w", str(copy), "--sources",
                                                        str(cfg), "--from", OLD, "--to", NEW)[1]
