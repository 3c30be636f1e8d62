"""The drop-in forms `groundwork lint SPANS ENVELOPE` and `groundwork verify ENVELOPE --sources
FILE`: what they print (stdout, stderr, exit status) is what the workbench prints, on every
corpus run and every rule case, and they start without what one run does not need (the typer
app, the whole warehouse schema)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from groundwork import cli
from groundwork.checks.lint import lint_warehouse
from groundwork.core.warehouse import apply_schema_for, connect, schema_sql
from groundwork.ingest import load_single
from ingest_support import CORPUS

EXPECTED = [json.loads(line) for line in (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines() if line]
SOURCES = CORPUS / "sources.yaml"
GROUNDWORK = [sys.executable, "-m", "groundwork.cli"]

# The rule cases' run writer (tests/checks/test_rules_cases.py), loaded by path: tests/checks is
# not on the path of a test run of tests/cli alone.
_spec = importlib.util.spec_from_file_location(
    "rules_cases_for_dropin", Path(__file__).parent.parent / "checks" / "test_rules_cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


def run_main(monkeypatch, capfd, *args) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of `groundwork ARGS...` through the real entry point, with
    the output captured at the file descriptors (the drop-in writes bytes to sys.stdout.buffer)."""
    monkeypatch.setattr(sys, "argv", ["groundwork", *map(str, args)])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capfd.readouterr()
    return exc.value.code, out.encode("utf-8", "surrogateescape"), err.encode("utf-8", "surrogateescape")


def test_every_corpus_run_prints_what_the_workbench_printed(monkeypatch, capfd):
    """`workbench lint SPANS ENVELOPE` and `workbench verify ENVELOPE --sources sources.yaml` on
    each corpus run printed expected.jsonl's grounding_txt / sources_txt and exited 0 or 1."""
    assert len(EXPECTED) >= 99
    for want in EXPECTED:
        folder = CORPUS / "runs" / want["invocation_id"]
        got = run_main(monkeypatch, capfd, "lint", folder / "spans.jsonl", folder / "envelope.json")
        assert got == (0 if want["lint"]["passed"] else 1, want["grounding_txt"].encode(), b""), want["scenario"]
        got = run_main(monkeypatch, capfd, "verify", folder / "envelope.json", "--sources", SOURCES)
        assert got == (0 if want["sources"]["passed"] else 1, want["sources_txt"].encode(), b""), want["scenario"]


def _lint_cases():
    for path in cases.CASES:
        rule = cases.RULES[path.parent.name]
        case = json.loads(path.read_text(encoding="utf-8"))
        if rule.kind != "source" and not case.get("children"):  # the drop-in sees one run alone
            yield pytest.param(path, case, rule.code, id=f"{path.parent.name}/{path.stem}")


def _source_cases():
    for path in cases.CASES:
        rule = cases.RULES[path.parent.name]
        if rule.kind == "source":
            yield pytest.param(path, json.loads(path.read_text(encoding="utf-8")), id=f"{path.parent.name}/{path.stem}")


def _warehouse_lint(spans: Path, envelope: Path):
    """The same files linted in a warehouse with the whole schema (the path `groundwork lint`
    takes over an archive)."""
    con = connect(":memory:")
    try:
        key = load_single(con, spans, envelope)
        return lint_warehouse(con, record=False).by_id()[key]
    finally:
        con.close()


@pytest.mark.parametrize(("path", "case", "code"), list(_lint_cases()))
def test_lint_drop_in_on_a_rule_case(path, case, code, tmp_path, monkeypatch, capfd):
    spans, envelope = cases.write_run(tmp_path / "run", case)
    status, out, err = run_main(monkeypatch, capfd, "lint", spans, envelope)
    text = out.decode("utf-8")
    if case.get("status") == "unlintable":
        assert (status, out) == (2, b"")
        assert err.startswith(b"groundwork: error: the workbench linter cannot lint these files") and err.count(b"\n") == 1
        return
    assert err == b""
    for message in case["expect"]:  # the case's messages, each on its own line (GW findings are not printed)
        assert f"\n  - {message}\n" in text or code.startswith("GW"), message
    if "report" in case:  # the exact grounding.txt, written by hand
        assert (status, text) == (0 if text.startswith("grounding: passed") else 1, case["report"])
    else:  # else: what the same files give linted in a warehouse with the whole schema
        verdict = _warehouse_lint(spans, envelope)
        assert (status, text) == (0 if verdict.passed else 1, verdict.grounding_txt)


def test_a_rule_file_duckdb_refuses_is_named_by_the_drop_in(tmp_path, monkeypatch, capfd):
    """The drop-in runs every rule file in one statement (checks.onerun.one_statement); when
    DuckDB refuses it, the user is still told which file failed, as a lint in a warehouse says."""
    from groundwork.checks import rules

    broken = tmp_path / "GW9.sql"
    broken.write_text("-- code: GW9\n-- title: reads a column no relation has\n-- kind: finding\n-- modes: all\n"
                      "-- needs_succeeded: false\n-- order:\nSELECT invocation_id, no_such_column FROM lint_runs\n",
                      encoding="utf-8")
    every = rules.load_rules()
    monkeypatch.setattr(rules, "load_rules", lambda *a, **k: (*every, rules.parse_rule(broken)))
    folder = CORPUS / "runs" / EXPECTED[0]["invocation_id"]
    status, out, err = run_main(monkeypatch, capfd, "lint", folder / "spans.jsonl", folder / "envelope.json")
    assert (status, out) == (2, b"")
    assert err.startswith(b"groundwork: error: rule file GW9.sql failed: ") and err.count(b"\n") == 1


@pytest.mark.parametrize(("path", "case"), list(_source_cases()))
def test_verify_drop_in_on_a_rule_case(path, case, tmp_path, monkeypatch, capfd):
    sources = cases.write_sources(tmp_path, case["sources"])
    _, envelope = cases.write_run(tmp_path / "run", case)
    status, out, err = run_main(monkeypatch, capfd, "verify", envelope, "--sources", sources)
    if case["report"] is None:  # unverifiable: the workbench's verify crashes, so one line and exit 2
        assert (status, out) == (2, b"")
        assert err.startswith(b"groundwork: error: ") and err.count(b"\n") == 1
        return
    failing = path.parent.name != "S0" and case["expect"]
    assert (status, out.decode("utf-8"), err) == (1 if failing else 0, case["report"], b"")


def test_the_drop_in_forms_are_recognised_and_nothing_else():
    assert cli.drop_in(["lint", "a.jsonl", "b.json"]) is not None
    assert cli.drop_in(["verify", "e.json"]) is not None
    for form in (["verify", "e.json", "--sources", "s.yaml"], ["verify", "-s", "s.yaml", "e.json"],
                 ["verify", "--sources=s.yaml", "e.json"]):
        assert cli.drop_in(form) is not None, form
    for other in (["lint"], ["lint", "a"], ["lint", "a", "b", "c"], ["lint", "--help"], ["lint", "a", "--all"],
                  ["lint", "-w", "x"], ["verify"], ["verify", "--help"], ["verify", "e.json", "--format", "jsonl"],
                  ["verify", "e.json", "f.json"], ["verify", "-s", "s.yaml"], ["verify", "e.json", "-s"],
                  ["verify", "e.json", "-s", "a", "-s", "b"], ["verify", "e.json", "--run", "x"], ["ingest", "a", "b"],
                  ["--help"], []):
        assert cli.drop_in(other) is None, other


def _process(*args, importtime=False) -> subprocess.CompletedProcess:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run([sys.executable, *flags, "-m", "groundwork.cli", *map(str, args)],
                          capture_output=True, timeout=120)


def _imported(stderr: bytes) -> set[str]:
    """The modules a `python -X importtime` process imported (its stderr lines)."""
    names = set()
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_a_drop_in_process_prints_the_same_and_imports_no_cli_framework():
    """A whole `groundwork lint` / `verify` drop-in process: the workbench's text and exit status,
    and neither typer, click nor pydantic imported (building the typer app cost ~0.1 s a call).
    The lint imports neither orjson (~13 ms of imports; the C paths parse such a run; verify
    parses the pinned copies with it) nor shutil (bz2, lzma: ~4 ms)."""
    want = next(w for w in EXPECTED if not w["lint"]["passed"] and not w["sources"]["passed"])
    folder = CORPUS / "runs" / want["invocation_id"]
    lint = _process("lint", folder / "spans.jsonl", folder / "envelope.json", importtime=True)
    verify = _process("verify", folder / "envelope.json", "--sources", SOURCES, importtime=True)
    assert (lint.returncode, lint.stdout) == (1, want["grounding_txt"].encode())
    assert (verify.returncode, verify.stdout) == (1, want["sources_txt"].encode())
    for proc in (lint, verify):
        assert not _imported(proc.stderr) & {"typer", "click", "pydantic", "rich"}
        # nor pandas (installed with the spark extra), which pyarrow would import at its first
        # list-to-array conversion: 0.2-0.3 s (groundwork.core.keepout). importtime lists the
        # refused attempt as "pandas"; an import that happened loads pandas.core and the rest.
        assert not any(line.rsplit("|", 1)[1].strip().startswith("pandas.")
                       for line in proc.stderr.decode().splitlines() if line.startswith("import time:"))
    assert not _imported(lint.stderr) & {"orjson", "shutil"}
    assert "groundwork" in _imported(lint.stderr)  # the check itself is there


def test_every_other_form_still_goes_through_typer():
    usage = _process("verify", CORPUS / "sources.yaml", "--bogus")
    assert usage.returncode == 2 and b"No such option" in usage.stderr and usage.stdout == b""
    helped = _process("lint", "--help")
    assert helped.returncode == 0 and b"SPANS ENVELOPE" in helped.stdout
    missing = _process("lint", "/nonexistent/spans.jsonl", "/nonexistent/envelope.json")
    assert (missing.returncode, missing.stdout) == (2, b"")
    assert missing.stderr == b"groundwork: error: cannot read spans file /nonexistent/spans.jsonl: no such file\n"


def _columns(con, names) -> dict:
    return {name: con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
                              "ORDER BY column_index", [name]).fetchall() for name in names}


def test_a_one_run_warehouse_has_only_what_it_needs_defined_as_in_the_whole_schema():
    part, whole = duckdb.connect(), duckdb.connect()
    try:
        apply_schema_for(part, {"runs", "lint_context", "source_check_items"})
        whole.execute(schema_sql())
        made = {r[0] for r in part.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                                           "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        # the views' inputs come along; nothing else (no history, no other view)
        assert made == {"runs", "lint_context", "delegations", "source_check_items", "evidence"}
        assert _columns(part, made) == _columns(whole, made)
    finally:
        part.close()
        whole.close()


def test_a_drop_in_process_imports_neither_pyarrow_nor_jinja2(tmp_path):
    """One run needs neither Arrow (~0.1 s to import) nor Jinja (~0.05 s: its messages are
    rendered by their plain form, groundwork.core.plaintemplates, once the template cache holds
    it). The first process fills the cache; the next imports neither."""
    want = next(w for w in EXPECTED if not w["lint"]["passed"] and not w["sources"]["passed"])
    folder = CORPUS / "runs" / want["invocation_id"]
    env = {**__import__("os").environ, "GROUNDWORK_TEMPLATE_CACHE": str(tmp_path / "cache")}
    calls = (("lint", folder / "spans.jsonl", folder / "envelope.json", want["grounding_txt"]),
             ("verify", folder / "envelope.json", "--sources", SOURCES, want["sources_txt"]))
    for *args, text in calls:
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "groundwork.cli", *map(str, args)],
                                  capture_output=True, timeout=120, env=env)
            assert (proc.returncode, proc.stdout) == (1, text.encode()), args[0]
        assert not _imported(proc.stderr) & {"pyarrow", "jinja2", "markupsafe", "pandas", "numpy"}, args[0]
        off = subprocess.run([sys.executable, "-m", "groundwork.cli", *map(str, args)], capture_output=True, timeout=120,
                             env={**env, "GROUNDWORK_TEMPLATE_CACHE": "off"})  # no cache: Jinja renders, the same
        assert (off.returncode, off.stdout, off.stderr) == (1, text.encode(), b""), args[0]


@pytest.mark.parametrize("arrow_rows", [1000, 0], ids=["bound", "arrow"])
@pytest.mark.parametrize("want", EXPECTED, ids=lambda w: w["scenario"])
def test_a_drop_in_writes_the_rows_ingest_writes(want, arrow_rows, monkeypatch):
    """ingest.single.insert_rows (bound parameters; Arrow above ARROW_ROWS rows) gives each run
    table exactly the rows the Arrow path of ingest.load.load_single gives it."""
    from groundwork.ingest import single
    from groundwork.ingest.single import insert_rows, run_rows
    from groundwork.ingest.tables import RUN_TABLES, column_list

    monkeypatch.setattr(single, "ARROW_ROWS", arrow_rows)
    folder = CORPUS / "runs" / want["invocation_id"]
    arrow, bound = connect(":memory:"), connect(":memory:")
    try:
        load_single(arrow, folder / "spans.jsonl", folder / "envelope.json")
        key, rows = run_rows(folder / "spans.jsonl", folder / "envelope.json")
        insert_rows(bound, rows)
        for table in RUN_TABLES:
            query = f"SELECT {column_list(table)} FROM {table} ORDER BY ALL"
            assert bound.execute(query).fetchall() == arrow.execute(query).fetchall(), table
    finally:
        arrow.close()
        bound.close()


def test_source_records_are_the_same_bound_or_through_arrow(monkeypatch):
    """checks.sources writes a small copy's records with bound parameters and a large one's
    through Arrow: the same rows either way."""
    from groundwork.checks import sources

    tables = []
    for arrow_rows in (10**9, 0):
        monkeypatch.setattr(sources, "ARROW_ROWS", arrow_rows)
        con = connect(":memory:")
        try:
            sources.load_into_warehouse(con, SOURCES)
            tables.append([con.execute(f"SELECT * EXCLUDE (loaded_at) FROM {t} ORDER BY ALL" if t == "source_copies"
                                       else f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                           for t in ("source_copies", "source_records", "source_refs")])
        finally:
            con.close()
    assert tables[0] == tables[1] and len(tables[0][1]) > 5


def test_garbage_is_collected_as_usual_once_a_drop_in_has_imported():
    """The process entry imports a drop-in's modules with the cyclic collector off
    (cli._imports_without_gc); the run itself is collected as usual, and so is the caller's
    garbage when the collector was on before."""
    import gc

    assert gc.isenabled()
    try:
        assert cli.drop_in(["verify", "e.json"], cli._imports_without_gc) is not None
        assert gc.isenabled() and gc.get_freeze_count() > 0
        gc.disable()
        cli.drop_in(["lint", "a.jsonl", "b.json"], cli._imports_without_gc)
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_drop_in_process_imports_duckdbs_engine_not_its_package():
    """A drop-in needs DuckDB's engine (the extension module _duckdb: connect, execute, bound
    parameters, exceptions), not the duckdb package's Python layer (its relational API, Arrow
    sources, importlib.metadata): ~0.1 s of every call (groundwork.core.engine)."""
    want = next(w for w in EXPECTED if not w["lint"]["passed"] and not w["sources"]["passed"])
    folder = CORPUS / "runs" / want["invocation_id"]
    for args, text in ((("lint", folder / "spans.jsonl", folder / "envelope.json"), want["grounding_txt"]),
                       (("verify", folder / "envelope.json", "--sources", SOURCES), want["sources_txt"])):
        proc = _process(*args, importtime=True)
        assert (proc.returncode, proc.stdout) == (1, text.encode()), args[0]
        imported = _imported(proc.stderr)
        assert "_duckdb" in imported and "duckdb" not in imported, args[0]


_LARGE = """
import sys
from groundwork import cli
from groundwork.checks import sources
from groundwork.ingest import single
single.ARROW_ROWS = sources.ARROW_ROWS = 0  # every row through Arrow, as for a run of thousands of spans
sys.argv[0] = "groundwork"
cli.main()
"""


def test_a_drop_in_process_whose_rows_go_through_arrow_gives_the_same_text():
    """A run (or source copy) of more than ARROW_ROWS rows is handed to DuckDB as Arrow tables,
    which the engine alone cannot scan: in a process of its own (where nothing else imported
    the duckdb package) the drop-in still prints the workbench's text."""
    want = next(w for w in EXPECTED if not w["lint"]["passed"] and not w["sources"]["passed"])
    folder = CORPUS / "runs" / want["invocation_id"]
    for args, text in ((("lint", folder / "spans.jsonl", folder / "envelope.json"), want["grounding_txt"]),
                       (("verify", folder / "envelope.json", "--sources", SOURCES), want["sources_txt"])):
        proc = subprocess.run([sys.executable, "-c", _LARGE, *map(str, args)], capture_output=True, timeout=120)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, text.encode(), b""), args[0]


def test_values_nested_hundreds_deep_are_judged_not_an_internal_error(tmp_path, monkeypatch, capfd):
    """An outcome status 600 levels deep (ingest keeps its str(), a recursive repr ran out of
    stack at ~330) and evidence content 1,000 deep once stopped the drop-ins with "internal
    error: RecursionError". The deep status is judged as a shallow one is. An envelope holding
    content 1,000 deep is past what json.loads parses, as the workbench reads it (Python 3.11;
    orjson, which nests to 1,024, once judged it): neither check can run, each says so in one
    line (docs/rules.md#canonical-json)."""
    import shutil

    def write(env):   # json.dumps recurses: room made for it while writing the test's file only
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(10_000)
        try:
            (run / "envelope.json").write_text(json.dumps(env, indent=2), encoding="utf-8")
        finally:
            sys.setrecursionlimit(old)

    want = next(w for w in EXPECTED if w["lint"]["passed"] and w["sources"]["passed"]
                and json.loads((CORPUS / "runs" / w["invocation_id"] / "envelope.json").read_text()).get("evidence"))
    run = tmp_path / "run"
    shutil.copytree(CORPUS / "runs" / want["invocation_id"], run)
    env = json.loads((run / "envelope.json").read_text(encoding="utf-8"))

    def deep(depth):
        value: object = "x"
        for _ in range(depth):
            value = {"n": value}
        return value

    got = {}
    for depth in (1, 600):
        env["outcome"]["status"] = deep(depth)
        write(env)
        got[depth] = (run_main(monkeypatch, capfd, "lint", run / "spans.jsonl", run / "envelope.json"),
                      run_main(monkeypatch, capfd, "verify", run / "envelope.json", "--sources", SOURCES))
    (lint_code, lint_out, lint_err), verify_got = got[600]
    assert lint_code in (0, 1) and lint_out.startswith(b"grounding: ") and lint_err == b""
    assert verify_got == (0, want["sources_txt"].encode(), b"")
    assert got[600] == got[1]

    env["outcome"]["status"] = "succeeded"
    env["evidence"][0]["content"] = deep(1000)
    write(env)
    # The envelope is then 1,003 levels deep: past json.loads' depth (about 995 levels from a
    # shallow stack), so the workbench cannot read it at all, for either check.
    too_deep = f"{run / 'envelope.json'}: JSON nested too deeply for Python's json module"
    code, out, err = run_main(monkeypatch, capfd, "lint", run / "spans.jsonl", run / "envelope.json")
    assert (code, out, err) == (2, b"", f"groundwork: error: the workbench linter cannot lint these files ({too_deep})\n".encode())
    code, out, err = run_main(monkeypatch, capfd, "verify", run / "envelope.json", "--sources", SOURCES)
    assert (code, out) == (2, b"")
    assert err == (f"groundwork: error: {run / 'envelope.json'}: the source check cannot run on this envelope: "
                   "envelope.json: JSON nested too deeply for Python's json module\n").encode()


def test_an_error_line_stays_one_readable_line_whatever_the_run_put_in_it(tmp_path, monkeypatch, capfd):
    """A 100,000-character start time once made the exit-2 line 100 KB long; a path holding a
    newline or a terminal escape split the line or coloured the terminal."""
    import shutil

    want = EXPECTED[0]
    run = tmp_path / "run"
    shutil.copytree(CORPUS / "runs" / want["invocation_id"], run)
    lines = (run / "spans.jsonl").read_text(encoding="utf-8").splitlines()
    span = json.loads(lines[0])
    span["start_time"] = "9" * 100_000
    (run / "spans.jsonl").write_text("\n".join([json.dumps(span), *lines[1:]]) + "\n", encoding="utf-8")
    code, out, err = run_main(monkeypatch, capfd, "lint", run / "spans.jsonl", run / "envelope.json")
    assert (code, out) == (2, b"")
    assert err.count(b"\n") == 1 and len(err) < 2100, len(err)
    assert err.startswith(b"groundwork: error: the workbench linter cannot lint these files (")
    assert b"characters cut]" in err and err.endswith(b"' is not an ISO 8601 time)\n")

    hostile = tmp_path / "a\nb\x1b[31m"
    code, out, err = run_main(monkeypatch, capfd, "lint", hostile / "spans.jsonl", run / "envelope.json")
    assert (code, out) == (2, b"")
    assert err.count(b"\n") == 1 and b"\x1b" not in err and b"a\\x0ab\\x1b[31m" in err, err


@pytest.mark.parametrize("form", ["bare", "batch"])
def test_an_otlp_spans_file_is_refused_as_the_workbench_crashes_on_it(form, tmp_path, monkeypatch, capfd):
    """`workbench lint` reads every spans line as its own span form (spec 2.2: a line without
    `context` makes its reader raise; 7: a traceback). An OTLP/JSON file, which ingest reads
    (docs/rules.md#spans), is therefore a crash for the drop-in: one line, exit 2, no report."""
    folder = CORPUS / "runs" / "01a22a33-c7c6-73a2-b254-cc7c3efa4c0d"  # pass/none/record
    spans = []
    for line in (folder / "spans.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        spans.append({"traceId": doc["context"]["trace_id"][2:], "spanId": doc["context"]["span_id"][2:],
                      "parentSpanId": (doc["parent_id"] or "0x")[2:], "name": doc["name"], "kind": 1,
                      "startTimeUnixNano": "1790000000000000000", "endTimeUnixNano": "1790000000000001000",
                      "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in doc["attributes"].items()]})
    if form == "bare":
        text, missing = "".join(json.dumps(s) + "\n" for s in spans), "context"
    else:
        text, missing = json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                                        "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]}) + "\n", "name"
    path = tmp_path / "spans.jsonl"
    path.write_text("\n" + text, encoding="utf-8")
    got = run_main(monkeypatch, capfd, "lint", path, folder / "envelope.json")
    assert got == (2, b"", (f"groundwork: error: the workbench linter cannot lint these files ({path} line 2: "
                            f"span line lacks the required key {missing!r})\n").encode())
