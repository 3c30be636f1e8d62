"""One set of options: --version, shell completion, usage lines without typer's artefacts, and
each setting (--warehouse, --sources, nightly's --out) resolved flag > environment >
groundwork.toml > default on every command that takes it, with --config global or per command."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_support import run_cli
from ingest_support import PASS_RETRIEVAL, archive

ROOT = Path(__file__).resolve().parents[2]

COMMANDS = [["ingest"], ["lint"], ["verify"], ["drift"], ["nightly"], ["watch"], ["synth"], ["sql"], ["query"],
            ["export"], ["serve"], ["example"], ["example", "build"], ["example", "check"], ["spark"], ["spark", "run"], []]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No setting from the machine running the tests; the current directory is a new one."""
    for name in ("GROUNDWORK_WAREHOUSE", "GROUNDWORK_SOURCES", "GROUNDWORK_REPORTS", "DD_SOURCES_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")


def plain(text: str) -> str:
    """Help text without terminal colours, runs of spaces as one."""
    return re.sub(r" +", " ", re.sub(r"\x1b\[[0-9;]*m", "", text))


def test_version_is_the_package_version(monkeypatch, capsys):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    code, out, err = run_cli(monkeypatch, capsys, "--version")
    assert (code, out, err) == (0, f"groundwork {version}\n", "")


def test_version_does_not_build_the_app(monkeypatch, capsys):
    from groundwork import cli

    cli.build_app.cache_clear()
    try:
        code, out, _ = run_cli(monkeypatch, capsys, "--version")
        assert code == 0 and cli.build_app.cache_info().currsize == 0
    finally:
        cli.build_app.cache_clear()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "groundwork")
def test_help_has_no_typer_artefacts(monkeypatch, capsys, command):
    code, out, err = run_cli(monkeypatch, capsys, *command, "--help")
    out = plain(out)
    assert code == 0, err
    usage = next(line for line in out.splitlines() if "Usage:" in line)
    assert "{" not in usage and "}" not in usage, usage
    for artefact in ("<bool>", "<str>", "<int>", "<float>", "<path>"):
        assert artefact not in out, (artefact, out)


def test_usage_lines_name_the_arguments_in_capitals(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "nightly", "--help")
    assert re.search(r"Usage: .*groundwork nightly \[OPTIONS\] RUNS_DIR *\n", plain(out))
    code, out, _ = run_cli(monkeypatch, capsys, "verify", "--help")
    assert re.search(r"Usage: .*groundwork verify \[OPTIONS\] \[ENVELOPE\] *\n", plain(out))


def test_install_completion_writes_a_script_that_completes_commands(tmp_path):
    program = Path(sys.executable).with_name("groundwork")  # the installed entry point: its name is the program's
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    done = subprocess.run([str(program), "--install-completion", "bash"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    script = tmp_path / ".bash_completions" / "groundwork.sh"
    assert "_GROUNDWORK_COMPLETE" in script.read_text(encoding="utf-8")
    assert str(script) in (tmp_path / ".bashrc").read_text(encoding="utf-8")
    # What the script asks the program for: completions of `groundwork ni` and of `nightly --wo`.
    for words, cword, want in (("groundwork ni", "1", ["nightly"]), ("groundwork nightly --wo", "2", ["--workers"])):
        done = subprocess.run([str(program)], capture_output=True, text=True, timeout=60,
                              env=dict(env, _GROUNDWORK_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=cword))
        assert done.returncode == 0 and done.stdout.split() == want, (done.stdout, done.stderr)


# --- precedence ------------------------------------------------------------------------------

LEVELS = ["flag", "env", "file", "default"]


def setup_level(monkeypatch, tmp_path: Path, level: str, setting: str, env: str, values: dict) -> list[str]:
    """Set the setting at ``level`` and every level below it (each to its own value); the extra
    arguments (the flag) to pass."""
    rank = LEVELS.index(level)
    if rank <= LEVELS.index("file"):
        (tmp_path / "groundwork.toml").write_text(f'{setting} = "{values["file"]}"\n', encoding="utf-8")
    if rank <= LEVELS.index("env"):
        monkeypatch.setenv(env, str(tmp_path / values["env"]))
    return [values["flag_opt"], str(tmp_path / values["flag"])] if level == "flag" else []


WAREHOUSES = {"flag": "flag.duckdb", "env": "env.duckdb", "file": "file.duckdb", "flag_opt": "-w"}


def expected_warehouse(tmp_path: Path, level: str) -> Path:
    """The path the command is given: the default and the file's value (relative to the file, here
    the current directory) as they are, the others as set."""
    return {"default": Path("warehouse.duckdb"), "file": Path(WAREHOUSES["file"])}.get(level, tmp_path / WAREHOUSES.get(level, ""))


READING = {  # commands that open an existing warehouse: the error names the one they looked for
    "lint": ["lint"],
    "verify": ["verify", "--sources", "s.yaml"],
    "drift": ["drift", "--sources", "s.yaml", "--from", "a", "--to", "b"],
    "sql": ["sql", "SELECT 1"],
    "query": ["query", "runs_citing_source", "--param", "source_id=x"],
    "export": ["export", "--parquet", "pq"],
    "serve": ["serve", "--port", "0"],
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("command", sorted(READING))
def test_warehouse_precedence_on_reading_commands(monkeypatch, capsys, tmp_path, command, level):
    extra = setup_level(monkeypatch, tmp_path, level, "warehouse", "GROUNDWORK_WAREHOUSE", WAREHOUSES)
    code, out, err = run_cli(monkeypatch, capsys, *READING[command], *extra)
    want = expected_warehouse(tmp_path, level)
    assert code == 2 and f"warehouse {want} does not exist" in err, err
    hint = err.split("run `", 1)[1].split("`", 1)[0]
    assert shlex.split(hint) == ["groundwork", "ingest", "RUNS_DIR", "--warehouse", str(want)]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("command", ["ingest", "nightly"])
def test_warehouse_precedence_on_writing_commands(monkeypatch, capsys, tmp_path, command, level):
    runs, _ = archive(tmp_path / "a", PASS_RETRIEVAL)
    extra = setup_level(monkeypatch, tmp_path, level, "warehouse", "GROUNDWORK_WAREHOUSE", WAREHOUSES)
    args = [command, str(runs), "-q", *extra] + (["--out", str(tmp_path / "out")] if command == "nightly" else [])
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    made = sorted(p.name for p in tmp_path.glob("*.duckdb"))
    assert made == [expected_warehouse(tmp_path, level).name]


def test_watch_gets_the_resolved_warehouse_and_sources(monkeypatch, capsys, tmp_path):
    seen = {}

    def fake_watch(runs_dir, **kw):
        seen.update(kw)
        return 0

    import groundwork.jobs.watch as watch

    monkeypatch.setattr(watch, "run_watch", fake_watch)
    (tmp_path / "groundwork.toml").write_text('warehouse = "file.duckdb"\nsources = "file.yaml"\n', encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "watch", "runs")
    assert code == 0, err
    assert (seen["warehouse"], seen["sources"]) == ("file.duckdb", "file.yaml")  # relative to the file: here
    monkeypatch.setenv("GROUNDWORK_WAREHOUSE", "env.duckdb")
    monkeypatch.setenv("GROUNDWORK_SOURCES", "env.yaml")
    code, _, err = run_cli(monkeypatch, capsys, "watch", "runs")
    assert (seen["warehouse"], seen["sources"]) == ("env.duckdb", "env.yaml")
    code, _, err = run_cli(monkeypatch, capsys, "watch", "runs", "-w", "flag.duckdb", "-s", "flag.yaml")
    assert (seen["warehouse"], seen["sources"]) == ("flag.duckdb", "flag.yaml")
    monkeypatch.delenv("GROUNDWORK_WAREHOUSE")
    monkeypatch.delenv("GROUNDWORK_SOURCES")
    (tmp_path / "groundwork.toml").unlink()
    code, _, err = run_cli(monkeypatch, capsys, "watch", "runs")
    assert (seen["warehouse"], seen["sources"]) == ("warehouse.duckdb", None)


SOURCES = {"flag": "flag.yaml", "env": "env.yaml", "file": "file.yaml", "flag_opt": "--sources"}


@pytest.fixture
def warehouse(monkeypatch, capsys, tmp_path) -> Path:
    runs, _ = archive(tmp_path / "a", PASS_RETRIEVAL)
    w = tmp_path / "made.duckdb"
    code, _, err = run_cli(monkeypatch, capsys, "ingest", str(runs), "-w", str(w), "-q")
    assert code == 0, err
    return w


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("command", ["verify", "drift", "nightly"])
def test_sources_precedence(monkeypatch, capsys, tmp_path, warehouse, command, level):
    extra = setup_level(monkeypatch, tmp_path, level, "sources", "GROUNDWORK_SOURCES", SOURCES)
    if level == "default":
        monkeypatch.setenv("DD_SOURCES_CONFIG", str(tmp_path / "dd.yaml"))  # the workbench's, below the file
    args = {"verify": ["verify"], "drift": ["drift", "--from", "a", "--to", "b"],
            "nightly": ["nightly", str(tmp_path / "a" / "runs"), "--out", str(tmp_path / "out")]}[command]
    code, out, err = run_cli(monkeypatch, capsys, *args, "-w", str(warehouse), *extra)
    if command == "nightly" and level == "default":  # no sources: the source check is skipped
        assert code == 0, err
        return
    want = {"default": tmp_path / "dd.yaml", "file": Path(SOURCES["file"])}.get(level) or tmp_path / SOURCES[level]
    assert code == 2 and str(want) in err and len(err.splitlines()) == 1, err


REPORTS = {"flag": "flag-out", "env": "env-out", "file": "file-out", "flag_opt": "--out"}


@pytest.mark.parametrize("level", LEVELS)
def test_nightly_reports_folder_precedence(monkeypatch, capsys, tmp_path, level):
    runs, _ = archive(tmp_path / "a", PASS_RETRIEVAL)
    extra = setup_level(monkeypatch, tmp_path, level, "reports", "GROUNDWORK_REPORTS", REPORTS)
    code, out, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(tmp_path / "w.duckdb"), "-q", *extra)
    assert code == 0, err
    want = Path("reports-out").resolve() if level == "default" else tmp_path / REPORTS[level]
    assert f"reports: {want}\n" in out
    assert (want / "fleet.html").is_file()


def test_config_per_command_wins_over_the_global_one_and_over_the_current_directory(monkeypatch, capsys, tmp_path):
    (tmp_path / "groundwork.toml").write_text('warehouse = "cwd.duckdb"\n', encoding="utf-8")
    (tmp_path / "g.toml").write_text('warehouse = "global.duckdb"\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.toml").write_text('warehouse = "command.duckdb"\n', encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "--config", "g.toml", "sql", "SELECT 1")
    assert code == 2 and "warehouse global.duckdb does not exist" in err, err
    code, _, err = run_cli(monkeypatch, capsys, "--config", "g.toml", "sql", "SELECT 1", "--config", "sub/c.toml")
    assert code == 2 and "warehouse sub/command.duckdb does not exist" in err, err  # relative to the file
    code, _, err = run_cli(monkeypatch, capsys, "sql", "SELECT 1")
    assert code == 2 and "warehouse cwd.duckdb does not exist" in err, err


@pytest.mark.parametrize("text, message", [
    ('warehose = "w.duckdb"\n', "unknown key 'warehose' (known: warehouse, sources, reports, severity)"),
    ("warehouse = 3\n", "warehouse must be a non-empty string (a path)"),
    ("warehouse = \n", "not valid TOML"),
    ('severity = "warn"\n', "severity must be a table"),
])
def test_a_bad_config_file_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path, text, message):
    (tmp_path / "groundwork.toml").write_text(text, encoding="utf-8")
    for args in (["sql", "SELECT 1"], ["lint"], ["ingest", "runs"]):
        code, out, err = run_cli(monkeypatch, capsys, *args)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert err.startswith("groundwork: error: groundwork.toml: " + message), err


def test_a_missing_config_file_named_by_config_is_an_error(monkeypatch, capsys, tmp_path):
    code, out, err = run_cli(monkeypatch, capsys, "--config", "nope.toml", "sql", "SELECT 1")
    assert (code, out, err) == (2, "", "groundwork: error: config file nope.toml does not exist\n")


# --- the README's settings example -----------------------------------------------------------

def readme_block(kind: str, after: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(rf"```{kind}\n(.*?)```", text.split(after, 1)[1], re.S).group(1)


def test_the_readme_groundwork_toml_works_as_shown(monkeypatch, capsys, tmp_path):
    import shutil

    shutil.copytree(ROOT / "examples" / "archive", tmp_path / "examples" / "archive")
    (tmp_path / "groundwork.toml").write_text(readme_block("toml", "#### Settings: groundwork.toml"), encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "nightly", "examples/archive/runs", "-q")
    assert code == 1 and f"reports: {tmp_path / 'out' / 'reports'}" in out, err  # the first night: 27 new
    assert (tmp_path / "out" / "warehouse.duckdb").is_file()
    code, out, err = run_cli(monkeypatch, capsys, "lint")
    assert code == 1 and "99 runs (99 unchanged since their last lint), 72 passed, 27 failed" in out, err
    code, out, err = run_cli(monkeypatch, capsys, "verify")
    assert code in (0, 1) and "(sources: examples/archive/sources.yaml)" in out + err, out + err
    code, out, err = run_cli(monkeypatch, capsys, "sql", "SELECT count(*) FROM runs")
    assert code == 0 and " 99\n" in out, err


def test_the_readme_json_line_works_as_shown(monkeypatch, capsys, tmp_path):
    import shutil

    shutil.copytree(ROOT / "examples" / "archive", tmp_path / "examples" / "archive")
    line = readme_block("sh", "`--json` on `ingest`").strip()
    argv = shlex.split(line)
    assert argv[0] == "groundwork"
    code, out, err = run_cli(monkeypatch, capsys, *argv[1:])
    doc = json.loads(out)
    assert code == 1 and doc["exit_status"] == 1 and doc["runs_linted"] == 99 and err == ""
