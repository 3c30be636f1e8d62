"""The layering of README.md's "Where things are", enforced: every import of every module (function-
local ones too), no cycle between modules or folders, no import against the layers; and the
wheel installs one top-level name, groundwork, with every module and data file inside it."""

from __future__ import annotations

import ast
import collections
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The checkout's folder of each installed package (pyproject.toml's package-dir).
SOURCE_FOLDERS = {"groundwork": ROOT / "groundwork", "groundwork.ingest": ROOT / "ingest",
                  "groundwork.reports": ROOT / "reports"}
TOP_LEVEL_FOLDERS = ("ingest", "reports", "sql")  # never imported under these names

# What each layer may import besides itself (README.md, "Where things are"). "root" is the
# package groundwork/__init__.py (__version__, importing nothing), which core does not need.
ALLOWED = {
    "root": set(),
    "core": set(),
    "ingest": {"root", "core"},
    "checks": {"root", "core"},
    "synth": {"root", "core"},
    "reports": {"root", "core", "checks"},
    "investigate": {"root", "core", "checks"},
    "jobs": {"root", "core", "ingest", "checks", "reports", "investigate"},
    "spark": {"root", "core", "ingest", "checks", "reports"},
    "serve": {"root", "core", "checks", "reports", "investigate"},
    "commands": {"root", "core", "ingest", "checks", "synth", "reports", "investigate", "jobs", "spark", "serve"},
}


@dataclass(frozen=True)
class Import:
    source: str   # importing module
    target: str   # imported project module
    path: Path
    line: int

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def modules() -> dict[str, Path]:
    """Every module of the project, by its installed name."""
    found = {}
    for package, folder in SOURCE_FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join((package, *parts))
            if name in found:  # ingest/ inside groundwork/? would shadow the installed package
                raise AssertionError(f"{path} and {found[name]} are both {name}")
            found[name] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The project module that importing ``name`` runs last (a name inside a module: that module)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(known: dict[str, Path]) -> tuple[list[Import], list[str]]:
    """Every import of a project module by a project module, and every import of a top-level
    name the distribution does not install (``import reports``)."""
    edges, wrong_names = [], []
    for source, path in known.items():
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from M import n`: the module M.n when there is one, else M.
                names = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                         for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] in TOP_LEVEL_FOLDERS:
                    wrong_names.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {name}; installed as groundwork.{name}")
                if not name.startswith("groundwork"):
                    continue
                target = _resolve(name, known)
                if target is not None and target != source:
                    edges.append(Import(source, target, path, node.lineno))
    return list(dict.fromkeys(edges)), wrong_names


def layer(module: str) -> str:
    if module == "groundwork":
        return "root"
    if module == "groundwork.cli":
        return "commands"
    part = module.split(".")[1]
    if part not in ALLOWED:
        raise AssertionError(f"{module}: in no layer of README.md's \"Where things are\" (tests/core/test_layers.py ALLOWED)")
    return part


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


KNOWN = modules()
EDGES, WRONG_NAMES = imports(KNOWN)


def _shortest_cycle(graph: dict[str, set[str]], start: str, members: set[str]) -> list[str]:
    """The shortest path start -> ... -> start inside ``members`` (breadth first)."""
    previous, queue = {}, collections.deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1] + [start]
            if nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    raise AssertionError("not a cycle")


def _cycle_report(edges: list[Import], key) -> list[str]:
    """One line per cycle (its shortest round trip), then the imports making each step of it."""
    graph, by_step = collections.defaultdict(set), collections.defaultdict(list)
    for edge in edges:
        a, b = key(edge.source), key(edge.target)
        if a != b:
            graph[a].add(b)
            by_step[a, b].append(edge)
    out = []
    for component in cycles(graph):
        path = _shortest_cycle(graph, component[0], set(component))
        lines = [" -> ".join(path)]
        for a, b in zip(path, path[1:]):
            lines += [f"  {e.where()}: {e.source} imports {e.target}" for e in by_step[a, b][:5]]
            if len(by_step[a, b]) > 5:
                lines.append(f"  ... and {len(by_step[a, b]) - 5} more imports from {a} of {b}")
        out.append("\n".join(lines))
    return out


def test_the_scan_sees_every_layer_and_function_local_imports():
    assert {layer(m) for m in KNOWN} == set(ALLOWED)
    # A function-local import counts like any other (groundwork.commands.* import the jobs inside
    # their command functions).
    assert any(e.source == "groundwork.commands.nightly" and e.target == "groundwork.jobs.nightly" for e in EDGES)


def test_no_module_is_imported_under_a_name_the_distribution_does_not_install():
    assert WRONG_NAMES == [], "\n".join(WRONG_NAMES)


def test_no_import_cycle_between_modules():
    found = _cycle_report(EDGES, key=lambda name: name)
    assert not found, "import cycle(s) between modules:\n" + "\n".join(found)


def test_no_import_cycle_between_folders():
    found = _cycle_report(EDGES, key=layer)
    assert not found, "import cycle(s) between folders:\n" + "\n".join(found)


def test_every_import_goes_down_the_layers():
    wrong = [f"{e.where()}: {layer(e.source)} may not import {layer(e.target)} ({e.source} imports {e.target})"
             for e in EDGES if layer(e.source) != layer(e.target) and layer(e.target) not in ALLOWED[layer(e.source)]]
    assert not wrong, "imports against the layers (README.md, \"Where things are\"):\n" + "\n".join(wrong)


# ------------------------------------------------------------------------------------ the wheel


def _data_files(folder: Path, pattern: str) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.glob(pattern) if p.is_file()}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> set[str]:
    """The names in the wheel built from the checkout's package sources (copied first, so the
    build leaves nothing in the checkout and picks up no in-place built extension)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("groundwork", "ingest", "reports", "sql"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(src)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (path,) = (tmp / "dist").glob("groundwork-*.whl")
    with zipfile.ZipFile(path) as archive:
        return set(archive.namelist())


def test_the_wheel_adds_only_groundwork(wheel):
    top = {name.split("/")[0] for name in wheel}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert len(dist_info) == 1 and dist_info.pop().startswith("groundwork-")
    assert top - {t for t in top if t.endswith(".dist-info")} == {"groundwork"}


def test_the_wheel_holds_every_module_and_data_file(wheel):
    folders = {**{folder: package.replace(".", "/") for package, folder in SOURCE_FOLDERS.items()},
               ROOT / "sql": "groundwork/sql"}
    wanted = [(folder, prefix, "**/*.py") for folder, prefix in folders.items()] + [
        (ROOT / "sql", "groundwork/sql", "**/*.sql"),   # schema/, rules/, queries/, reports/
        (ROOT / "reports", "groundwork/reports", "templates/**/*"),
        (ROOT / "groundwork" / "checks", "groundwork/checks", "templates/**/*"),
        (ROOT / "groundwork" / "serve", "groundwork/serve", "templates/**/*"),
        (ROOT / "groundwork" / "core", "groundwork/core", "*.txt"),
    ]
    missing = []
    for folder, prefix, pattern in wanted:
        names = _data_files(folder, pattern)
        if pattern != "**/*.py":
            assert names, f"nothing matches {pattern} in {folder}"
        missing += [f"{prefix}/{name}" for name in sorted(names) if f"{prefix}/{name}" not in wheel]
    assert not missing, "not in the wheel:\n" + "\n".join(missing)
