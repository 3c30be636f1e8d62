"""Saved investigations: sql/queries/<name>.sql with a `-- key: value` header and `$name` parameters.

Header grammar (the leading block of `--` lines; it ends at the first other line):

    -- title: Runs citing a source                       (required, one line)
    -- description: What the query answers.             (optional; `--   more` continues it)
    -- param: source_id (required) — the cited source id
    -- param: since (date, default 1970-01-01) — first completion date included
    -- param: agent_id (optional) — only this agent (NULL = every agent)

A param's parentheses hold its type (text, int, float, bool, date, timestamp; text when
omitted) and one of `required`, `optional` (default NULL) or `default VALUE`. Values are bound
as `$name` parameters, never pasted into the SQL.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from pathlib import Path

from groundwork.core.errors import GroundworkError
from groundwork.core.escape import visible
from groundwork.core.paths import QUERIES_DIR

TYPES = ("text", "int", "float", "bool", "date", "timestamp")
KEYS = ("title", "description", "param")
_HEADER = re.compile(r"^--\s?([a-z_]+):\s*(.*)$")
_CONTINUATION = re.compile(r"^--\s{2,}(\S.*)$")
_PARAM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([^)]*)\))?\s*(?:(?:—|--|-)\s*(.*))?$")
_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")


class QueryError(GroundworkError):
    """A saved query file is malformed, unknown, or given bad parameters."""


@dataclass(frozen=True)
class Param:
    """One `-- param:` line."""

    name: str
    type: str = "text"
    required: bool = False
    default: str | None = None
    description: str = ""


@dataclass(frozen=True)
class SavedQuery:
    """A parsed sql/queries/<name>.sql file; ``name`` is the file stem."""

    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    sql: str
    path: Path


def parse_param(text: str, where: str) -> Param:
    """Parse the value of a `-- param:` line.

    >>> parse_param("since (date, default 1970-01-01) — first day", "q")
    Param(name='since', type='date', required=False, default='1970-01-01', description='first day')
    """
    m = _PARAM.match(text.strip())
    if not m:
        raise QueryError(f"{where}: cannot read param line {text!r}; expected NAME (TYPE, required|optional|default VALUE) — description")
    name, spec, description = m.group(1), m.group(2) or "", (m.group(3) or "").strip()
    ptype, required, default, has_default = "text", False, None, False
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        if item in TYPES:
            ptype = item
        elif item == "required":
            required = True
        elif item == "optional":
            has_default = True
        elif item.startswith("default "):
            default, has_default = item[len("default "):].strip(), True
        else:
            raise QueryError(f"{where}: param {name}: unknown item {item!r} (types: {', '.join(TYPES)}; required, optional, default VALUE)")
    if required == has_default:
        raise QueryError(f"{where}: param {name} must be exactly one of required, optional or default VALUE")
    param = Param(name, ptype, required, default, description)
    if default is not None:
        convert(param, default, where)  # a default must be a valid value of its type
    return param


def parse(text: str, name: str, path: Path | None = None) -> SavedQuery:
    """Parse the text of a saved query file named ``name``."""
    where = str(path or name)
    fields: dict[str, list[str]] = {"title": [], "description": [], "param": []}
    last = None
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        cont = _CONTINUATION.match(line)
        m = _HEADER.match(line)
        if m and not cont:
            key, value = m.group(1), m.group(2).strip()
            if key not in KEYS:
                raise QueryError(f"{where}: unknown header key {key!r} (known: {', '.join(KEYS)})")
            fields[key].append(value)
            last = key
        elif cont and last in ("title", "description"):
            fields[last][-1] += " " + cont.group(1).strip()
        elif line.strip("- "):
            last = None  # an ordinary comment inside the header
    if len(fields["title"]) != 1 or not fields["title"][0]:
        raise QueryError(f"{where}: needs exactly one `-- title:` line")
    params = tuple(parse_param(p, where) for p in fields["param"])
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise QueryError(f"{where}: a param is declared twice")
    return SavedQuery(name, fields["title"][0], " ".join(fields["description"]), params, text, path or Path(name))


def load(directory: Path | None = None) -> dict[str, SavedQuery]:
    """Return every saved query of ``directory`` (default sql/queries/) by name, sorted by name."""
    out = {}
    for path in sorted(Path(directory or QUERIES_DIR).glob("*.sql")):
        out[path.stem] = parse(path.read_text(encoding="utf-8"), path.stem, path)
    return out


def get(name: str, directory: Path | None = None) -> SavedQuery:
    """Return the saved query ``name``; raise QueryError naming the known ones."""
    queries = load(directory)
    if name not in queries:
        raise QueryError(f"no saved query {name!r}; known: {', '.join(queries) or 'none'} (see `groundwork query --list`)")
    return queries[name]


def convert(param: Param, raw: str, where: str = ""):
    """Turn the text ``raw`` into a value of ``param``'s type; raise QueryError if it is not one."""
    label = f"{where + ': ' if where else ''}param {param.name}"
    try:
        if param.type == "int":
            return int(raw)
        if param.type == "float":
            value = float(raw)
            if not math.isfinite(value):   # NaN compares above every number in DuckDB: `x < nan` holds for all
                raise ValueError
            return value
        if param.type == "date":
            return dt.date.fromisoformat(raw)
        if param.type == "timestamp":
            return dt.datetime.fromisoformat(raw)
        if param.type == "bool":
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            raise ValueError
    except ValueError:
        shape = {"float": " (a finite number)", "date": " (YYYY-MM-DD)", "timestamp": " (YYYY-MM-DD[THH:MM:SS])"}.get(param.type, "")
        raise QueryError(f"{label}: expected {param.type}{shape}, got {raw!r}") from None
    return raw


def bind(query: SavedQuery, given: dict[str, str]) -> dict:
    """Return the typed parameter values for ``query`` from ``given`` (text values) and the defaults."""
    declared = {p.name: p for p in query.params}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        takes = ", ".join(declared) or "no parameters"
        raise QueryError(f"query {query.name} has no parameter {unknown[0]!r}; it takes: {takes}")
    values = {}
    for p in query.params:
        if p.name in given:
            values[p.name] = convert(p, given[p.name], f"query {query.name}")
        elif p.required:
            raise QueryError(f"query {query.name} needs --param {p.name}=VALUE ({p.description or p.type})")
        else:
            values[p.name] = None if p.default is None else convert(p, p.default)
    return values


def parse_assignments(items: list[str]) -> dict[str, str]:
    """Parse `--param k=v` values into a dict; raise QueryError on an item without `=`.

    >>> parse_assignments(["a=1", "b=x=y"])
    {'a': '1', 'b': 'x=y'}
    """
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise QueryError(f"--param expects NAME=VALUE, got {item!r}")
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:   # a command line's undecodable bytes (kept as lone surrogates)
            raise QueryError(f"--param {visible(key.strip())}: the value is not valid UTF-8 text") from None
        out[key.strip()] = value
    return out
