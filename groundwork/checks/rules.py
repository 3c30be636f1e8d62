"""Rule files: parse, validate and run the SELECTs in sql/rules/.

A rule is one ``.sql`` file whose body is a single SELECT (or WITH … SELECT) returning **one row
per violation**. The file starts with a header of ``-- key: value`` lines (the header ends at the
first line that is not one); the rest of the file is the body, which must stay runnable by hand
against a warehouse (``groundwork sql < sql/rules/G1.sql``).

Header keys (an unknown key, a missing required key or a bad value is a ``RuleFileError``):

``code`` (required)
    The code the violation is reported under (``G0``, ``E1``, …, ``GW1``, ``S1``). The file stem
    is the code, or ``<code>_<check>`` when one code is split into several files
    (``G0_tree.sql``).
``title`` (required)
    One line saying what the rule checks.
``kind`` (required)
    ``rule`` — a workbench grounding rule; its rows are the workbench's violations.
    ``finding`` — a groundwork-only finding (GW…); never part of the workbench-compatible output.
    ``source`` — a source-check rule (S1/S2, run by ``groundwork verify``, not by lint).
``modes`` (required)
    ``all`` or a comma list of ``retrieval, input_only, none, delegation``: the modes whose runs
    the rule can report. The body itself restricts to those modes, so the file is the whole
    truth; the header documents it and a test checks that the rows agree.
``needs_succeeded`` (required)
    ``true`` (fires only for a succeeded outcome), ``false``, or ``partly`` (one clause does,
    e.g. G2(b)) — docs/rules.md#succeeded.
``order`` (required, may be empty)
    Comma list of result columns that order a run's rows within the rule (the workbench's order,
    docs/rules.md#lint-order). The runner sorts by ``invocation_id`` then these columns. Empty for a rule that
    reports at most one row per run.
``step`` (required for ``kind: rule``)
    The docs/rules.md#lint-order step the rule belongs to (1–8). Step 8 rules are ordered within the step as in
    ``MODE_RULES``. Findings come after every workbench violation.

Every result column is available to the rule's message template as ``r.<column>``
(``groundwork/checks/templates/messages/<stem>.txt.j2``, ``Rule.template``). Parameters are written
``$name`` in the body and bound by the runner from the context it is given (never pasted into
the SQL); the runner passes exactly the names the body uses.

Example header::

    -- code: G1
    -- title: No chat span starts before the first retrieval span ends
    -- kind: rule
    -- step: 8
    -- modes: retrieval
    -- needs_succeeded: false
    -- order: parent_key, ord
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


from groundwork.core.engine import duckdb
from groundwork.core.errors import GroundworkError
from groundwork.core.paths import CHECK_TEMPLATES_DIR as TEMPLATES_DIR
from groundwork.core.paths import RULES_DIR

MODES = ("retrieval", "input_only", "none", "delegation")
KINDS = ("rule", "finding", "source")
# docs/rules.md#lint-order: the rules each mode applies, in order.
MODE_RULES = {
    "retrieval": ("G1", "G2", "G3", "G4"),
    "input_only": ("R1", "R2", "R3"),
    "none": ("R1", "R2", "R3", "N1"),
    "delegation": ("R1", "D1", "D2", "G4", "D3"),
}
# One order of all step-8 codes that contains every mode's list as a subsequence, so a run's
# step-8 violations can be ordered without looking at its mode (checked by a test).
STEP8_ORDER = ("G1", "G2", "G3", "R1", "R2", "R3", "N1", "D1", "D2", "G4", "D3")
FINDING_STEP = 9

REQUIRED = ("code", "title", "kind", "modes", "needs_succeeded", "order")
OPTIONAL = ("step",)
_HEADER_LINE = re.compile(r"^--\s*([a-z_]+)\s*:\s*(.*?)\s*$")
_CODE = re.compile(r"^[A-Z]{1,2}[0-9]{1,2}$")
_STEM = re.compile(r"^([A-Z]{1,2}[0-9]{1,2})(?:_([a-z][a-z0-9_]*))?$")
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# SQL string literals, quoted identifiers and comments (what a scan for names or parameters skips).
STRINGS_AND_COMMENTS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)


class RuleFileError(GroundworkError):
    """A rule file is malformed; the message names the file and the problem."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule file."""

    code: str
    title: str
    kind: str
    modes: tuple[str, ...]
    needs_succeeded: str
    order: tuple[str, ...]
    step: int
    path: Path
    body: str
    params: tuple[str, ...]

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def template(self) -> str:
        """Message template of the rule (every kind), relative to groundwork/checks/templates/."""
        return f"messages/{self.stem}.txt.j2"

    @property
    def rank(self) -> tuple[int, int]:
        """Position of the rule's violations in a report (docs/rules.md#lint-order): step, then step-8 order."""
        if self.kind == "rule" and self.step == 8:
            return (8, STEP8_ORDER.index(self.code))
        return (self.step, 0)

    def sorted_sql(self) -> str:
        """The body wrapped so that rows come out in report order within each run."""
        keys = ", ".join(("invocation_id",) + self.order)
        return f"SELECT * FROM (\n{self.body}\n) AS rule_rows ORDER BY {keys}"


def split_header(text: str) -> tuple[dict[str, str], str]:
    """Split a rule file into its ``-- key: value`` header and its body.

    >>> split_header("-- code: G1\\n-- title: t\\nSELECT 1\\n")
    ({'code': 'G1', 'title': 't'}, 'SELECT 1')
    """
    header: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _HEADER_LINE.match(lines[i])
        if not m:
            break
        key, value = m.groups()
        if key in header:
            raise ValueError(f"header key {key!r} given twice")
        header[key] = value
        i += 1
    return header, "\n".join(lines[i:]).strip().rstrip(";").rstrip()


def named_params(sql: str) -> tuple[str, ...]:
    """Names of the ``$name`` parameters a body uses (ignoring strings and comments), sorted.

    >>> named_params("SELECT $b, '$not' -- $nor\\nFROM t WHERE x = $a AND y = $b")
    ('a', 'b')
    """
    return tuple(sorted(set(_PARAM.findall(STRINGS_AND_COMMENTS.sub(" ", sql)))))


def _comma_list(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


def parse_rule(path: Path, text: str | None = None) -> Rule:
    """Parse and validate one rule file; raise RuleFileError naming the file on any problem."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if text is None else text

    def bad(problem: str) -> RuleFileError:
        return RuleFileError(f"rule file {path.name}: {problem}")

    try:
        header, body = split_header(text)
    except ValueError as exc:
        raise bad(str(exc)) from None
    unknown = sorted(set(header) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise bad(f"unknown header key(s) {', '.join(unknown)} (allowed: {', '.join(REQUIRED + OPTIONAL)})")
    missing = [k for k in REQUIRED if k not in header or (not header[k] and k != "order")]
    if missing:
        raise bad(f"missing header key(s) {', '.join(missing)}")
    code = header["code"]
    if not _CODE.match(code):
        raise bad(f"code {code!r} is not one or two capital letters and a number")
    stem = _STEM.match(path.stem)
    if not stem or stem.group(1) != code:
        raise bad(f"file name must be {code}.sql or {code}_<check>.sql")
    kind = header["kind"]
    if kind not in KINDS:
        raise bad(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    modes = _comma_list(header["modes"])
    if modes == ("all",):
        modes = MODES
    elif not modes or any(m not in MODES for m in modes):
        raise bad(f"modes {header['modes']!r} must be 'all' or a comma list of {', '.join(MODES)}")
    needs = header["needs_succeeded"]
    if needs not in ("true", "false", "partly"):
        raise bad(f"needs_succeeded {needs!r} must be true, false or partly")
    order = _comma_list(header["order"])
    if any(not _IDENT.match(col) for col in order):
        raise bad(f"order {header['order']!r} must be a comma list of result column names")
    if kind == "rule":
        if not re.fullmatch(r"[1-8]", header.get("step", "")):
            raise bad("a kind: rule file needs step: 1..8 (docs/rules.md#lint-order)")
        step = int(header["step"])
        if step == 8 and code not in STEP8_ORDER:
            raise bad(f"code {code} is not a step-8 rule (docs/rules.md#lint-order: {', '.join(STEP8_ORDER)})")
    elif "step" in header:
        raise bad("only kind: rule files have a step")
    else:
        step = FINDING_STEP
    code_only = STRINGS_AND_COMMENTS.sub(" ", body)
    if not re.match(r"(?is)^\s*(select|with)\b", code_only):
        raise bad("the body must be a single SELECT or WITH … SELECT statement")
    if ";" in code_only:
        raise bad("the body must be a single statement (no ';')")
    return Rule(code=code, title=header["title"], kind=kind, modes=modes, needs_succeeded=needs,
                order=order, step=step, path=path, body=body, params=named_params(body))


@lru_cache(maxsize=1024)
def _parsed(path: Path, text: str) -> Rule:
    """parse_rule, once per file name and text in a process (a watch loads the rules for every
    batch: parsing them all again cost ~5 ms each time)."""
    return parse_rule(path, text)


def load_rules(directory: Path = RULES_DIR, *, kinds: tuple[str, ...] = ("rule", "finding")) -> tuple[Rule, ...]:
    """Load every rule file of ``directory`` of the given kinds, in report order.

    The registry refuses two files that would report under the same code at the same place
    (same code, kind and step), and stems that differ only in case.
    """
    rules: list[Rule] = []
    seen_stems: dict[str, Path] = {}
    seen_slots: dict[tuple, Path] = {}
    for path in sorted(Path(directory).glob("*.sql")):
        rule = _parsed(path, path.read_text(encoding="utf-8"))
        folded = path.stem.lower()
        if folded in seen_stems:
            raise RuleFileError(f"rule files {seen_stems[folded].name} and {path.name} have the same name")
        seen_stems[folded] = path
        slot = (rule.kind, rule.code, rule.step)
        if rule.kind != "source" and slot in seen_slots:
            raise RuleFileError(f"rule files {seen_slots[slot].name} and {path.name} both report "
                                f"{rule.code} at step {rule.step}")
        seen_slots[slot] = path
        if rule.kind in kinds:
            rules.append(rule)
    return tuple(sorted(rules, key=lambda r: (r.rank, r.code, r.stem)))


def select(rules: tuple[Rule, ...], codes: list[str] | None) -> tuple[Rule, ...]:
    """Keep the rules whose code is in ``codes`` (all when None); unknown codes are an error."""
    if not codes:
        return rules
    wanted = {c.strip().upper() for c in codes if c.strip()}
    known = {r.code for r in rules}
    unknown = sorted(wanted - known)
    if unknown:
        raise GroundworkError(f"unknown rule code(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return tuple(r for r in rules if r.code in wanted)


def ruleset_hash(rules: tuple[Rule, ...], extra: tuple[Path, ...] = ()) -> str:
    """SHA-256 over the files of a rule set (stem and full text, in stem order), their message
    templates when they exist, and any ``extra`` files (e.g. the grounding.txt template)."""
    digest = hashlib.sha256()
    for rule in sorted(rules, key=lambda r: r.stem):
        digest.update(rule.stem.encode() + b"\0" + rule.path.read_bytes() + b"\0")
        template = TEMPLATES_DIR / rule.template
        if template.is_file():
            digest.update(template.read_bytes() + b"\0")
    for path in extra:
        digest.update(Path(path).read_bytes() + b"\0")
    return digest.hexdigest()


def bind(rule: Rule, context: dict | None) -> dict:
    """Exactly the parameters the rule uses, taken from ``context`` (a missing one is an error)."""
    context = context or {}
    missing = [p for p in rule.params if p not in context]
    if missing:
        raise RuleFileError(f"rule file {rule.path.name}: no value for parameter(s) ${', $'.join(missing)}")
    return {p: context[p] for p in rule.params}


def run(con: duckdb.DuckDBPyConnection, rule: Rule, context: dict | None = None):
    """Execute a rule; return (column names, rows as tuples) in report order within each run."""
    try:
        cur = con.execute(rule.sorted_sql(), bind(rule, context) or None)
    except duckdb.Error as exc:
        raise RuleFileError(f"rule file {rule.path.name} failed: {str(exc).splitlines()[0]}") from None
    return [d[0] for d in cur.description], cur.fetchall()


# ---------------------------------------------------------------------------------------------
# What each code means, for the reports (metadata only: nothing here changes a verdict)
# ---------------------------------------------------------------------------------------------

# A code split into several rule files has a title of its own (each file's ``title`` names its
# step); every other code's title is its one file's ``title``.
SPLIT_CODE_TITLES = {
    "G0": "The trace and the envelope are well formed enough to be judged",
}
# The verdicts a report shows in place of a rule code when a run could not be judged at all
# (JUnit's error testcases), with their docs/rules.md section.
UNJUDGED = {
    "unlintable": ("The workbench's linter could not lint the run", "unlintable-runs"),
    "unverifiable": ("The source check could not run on the envelope", "unverifiable-runs"),
}
KIND_NAMES = {"rule": "workbench grounding rule", "finding": "groundwork finding (never in grounding.txt)",
              "source": "source-check rule"}


@dataclass(frozen=True)
class CodeInfo:
    """One code as the reports explain it: its title, kind, modes and the rule files (stem,
    title) it is reported from; ``anchor`` is its section of docs/rules.md."""

    code: str
    title: str
    kind: str
    modes: tuple[str, ...]
    needs_succeeded: str
    parts: tuple[tuple[str, str], ...]
    anchor: str

    @property
    def description(self) -> str:
        """One sentence from the header: what kind of code it is, the modes it applies to and
        whether it needs a succeeded outcome."""
        if self.kind == "verdict":
            return "Not a rule: the run has no verdict of this check, so no rule of it judged the run."
        modes = "every grounding mode" if set(self.modes) == set(MODES) else "the " + ", ".join(self.modes) + " mode" + ("s" if len(self.modes) > 1 else "")
        when = {"true": "only when the outcome succeeded", "false": "whatever the outcome",
                "partly": "partly only when the outcome succeeded"}.get(self.needs_succeeded, "")
        return f"A {KIND_NAMES.get(self.kind, self.kind)}; applies to runs of {modes}, {when}."


def catalog(directory: Path = RULES_DIR) -> dict[str, CodeInfo]:
    """Every code of the rule files of ``directory`` (all kinds), in report order (workbench
    rules by lint order, then the source check, then groundwork's findings), plus the two
    verdicts that stand for a run no rule could judge (``unlintable``, ``unverifiable``)."""
    found = load_rules(directory, kinds=KINDS)
    by_code: dict[str, list[Rule]] = {}
    for rule in sorted(found, key=lambda r: (r.kind == "finding", r.kind == "source", r.rank, r.code, r.stem)):
        by_code.setdefault(rule.code, []).append(rule)
    out = {}
    for code, files in by_code.items():
        first = files[0]
        title = SPLIT_CODE_TITLES.get(code, first.title) if len(files) > 1 else first.title
        modes = tuple(m for m in MODES if any(m in f.modes for f in files))
        needs = first.needs_succeeded if all(f.needs_succeeded == first.needs_succeeded for f in files) else "partly"
        parts = tuple((f.stem, f.title) for f in files) if len(files) > 1 else ()
        out[code] = CodeInfo(code, title, first.kind, modes, needs, parts, code.lower())
    for code, (title, anchor) in UNJUDGED.items():
        out[code] = CodeInfo(code, title, "verdict", MODES, "false", (), anchor)
    return out
