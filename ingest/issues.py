"""Issue kinds and the per-run issue collector.

Every problem ingest finds is recorded in ``ingest_issues`` (path, line, kind, message, effect).
``effect`` says what it did to the run:

* ``rejected``   – the folder could not be loaded as a run at all (no ``runs`` row);
* ``unlintable`` – the workbench linter would crash or hang on this run; it is kept, never
  reported as passed;
* ``unverifiable`` – the workbench source check would crash on this envelope;
* ``unlintable+unverifiable`` – both;
* ``unlintable-if-read`` – an envelope value (``outcome``, ``evidence``, ``delegations``) the
  workbench linter crashes on only where it reads it: past its early stops, and ``delegations``
  only in delegation mode (docs/rules.md#early-stops). Ingest records the part's problem
  (``runs.<part>_problem``); lint decides whether the run reaches it;
* ``unlintable-if-read+unverifiable`` – that, and the source check would crash on it;
* ``none``       – recorded; the run is linted and verified normally.
"""

from __future__ import annotations

# ---- kinds (the vocabulary of ingest_issues.kind)
MISSING_FILE = "missing-file"          # envelope.json / spans.jsonl / request.json / grounding.txt absent
EMPTY_FILE = "empty-file"              # 0 bytes or whitespace only
TRUNCATED = "truncated"                # JSON ends early (last line / document cut off)
MALFORMED_JSON = "malformed-json"      # a line or document that is not JSON
NON_UTF8 = "non-utf8"                  # bytes that are not UTF-8
BOM = "bom"                            # a UTF-8 byte order mark at the start of a file
MISSING_KEY = "missing-key"            # span line / request lacks a required key
WRONG_TYPE = "wrong-type"              # a JSON value of the wrong type (evidence element, outcome, ...)
BAD_TIME = "bad-time"                  # a span time that is not ISO 8601
NAIVE_TIME = "naive-time"              # a span time without UTC offset (docs/rules.md#span-records)
NAME_MISMATCH = "name-mismatch"        # folder name != envelope invocation_id
DUPLICATE_ID = "duplicate-invocation-id"
CYCLE = "cycle"                        # span ids forming a cycle
UNREADABLE = "unreadable"              # a file or folder the OS refused to read
SYMLINK_OUTSIDE = "symlink-outside"    # a symlink leading outside the archive
LINE_TOO_LONG = "line-too-long"        # a single line over 16 MiB (a spans.jsonl line: dropped, run unlintable)
LONE_SURROGATE = "lone-surrogate"      # a \ud800-style escape; text columns show U+FFFD
UNEXPECTED_ENTRY = "unexpected-entry"  # something in the archive root that is not a run, index or schemas/
BAD_NAME = "bad-name"                  # a file/folder name that is not valid UTF-8
INTERNAL_ERROR = "internal-error"      # groundwork's own parser failed on the run (a bug; run kept, unlintable)
TOO_LARGE = "too-large"                # a file too large to hold (docs/rules.md#too-large-runs); not read
UNSTORABLE = "unstorable"              # rows the warehouse refused to store (run kept, unlintable, unverifiable)

KINDS = (MISSING_FILE, EMPTY_FILE, TRUNCATED, MALFORMED_JSON, NON_UTF8, BOM, MISSING_KEY, WRONG_TYPE,
         BAD_TIME, NAIVE_TIME, NAME_MISMATCH, DUPLICATE_ID, CYCLE, UNREADABLE, SYMLINK_OUTSIDE,
         LINE_TOO_LONG, LONE_SURROGATE, UNEXPECTED_ENTRY, BAD_NAME, INTERNAL_ERROR, TOO_LARGE, UNSTORABLE)

NONE = "none"
REJECTED = "rejected"
UNLINTABLE = "unlintable"
UNVERIFIABLE = "unverifiable"
BOTH = "unlintable+unverifiable"
UNLINTABLE_IF_READ = "unlintable-if-read"
BOTH_IF_READ = "unlintable-if-read+unverifiable"
# The envelope parts the workbench linter reads only past its early stops (docs/rules.md#early-stops),
# each a runs column <part>_problem.
READ_PARTS = ("outcome", "evidence", "delegations")


class Issues:
    """Issues of one run (or of the archive root), plus what they block."""

    __slots__ = ("items", "lint_blockers", "verify_blockers", "read_blockers")

    def __init__(self):
        self.items: list[tuple[str, int | None, str, str, str]] = []
        self.lint_blockers: list[str] = []
        self.verify_blockers: list[str] = []
        self.read_blockers: dict[str, list[str]] = {}

    def add(self, path: str, line: int | None, kind: str, message: str,
            lint: bool = False, verify: bool = False, lint_if_read: str | None = None) -> None:
        """Record an issue; ``lint``/``verify`` mark that the workbench's linter / source check
        would crash on it; ``lint_if_read`` names the envelope part (one of READ_PARTS) the
        linter crashes on only where it reads it (docs/rules.md#early-stops)."""
        if lint_if_read is not None:
            effect = BOTH_IF_READ if verify else UNLINTABLE_IF_READ
        else:
            effect = BOTH if (lint and verify) else UNLINTABLE if lint else UNVERIFIABLE if verify else NONE
        self.items.append((path, line, kind, message, effect))
        where = f"{path} line {line}" if line else path
        if lint:
            self.lint_blockers.append(f"{where}: {message}")
        if lint_if_read is not None:
            self.read_blockers.setdefault(lint_if_read, []).append(f"{where}: {message}")
        if verify:
            self.verify_blockers.append(f"{where}: {message}")

    def reject(self, path: str, kind: str, message: str) -> None:
        self.items.append((path, None, kind, message, REJECTED))


def reason(blockers: list[str]) -> str | None:
    """The runs.unlintable_reason / unverifiable_reason text: the first crash, and how many more."""
    if not blockers:
        return None
    if len(blockers) == 1:
        return blockers[0]
    return f"{blockers[0]} (and {len(blockers) - 1} more)"
