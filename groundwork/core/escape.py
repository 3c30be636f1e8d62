"""Escaping helpers for what groundwork prints and writes. Every string that came from a run is hostile.

HTML/XML escaping itself is Jinja's autoescape (groundwork.core.templating); these helpers
handle what autoescape does not (the reports' templates use them as filters,
groundwork.reports.render; the commands name their --out folders with ``slug``):

- ``visible``: control, format (bidi overrides such as U+202E), separator and unassigned
  characters are shown as ``\\xhh`` / ``\\uhhhh`` escapes, so an id cannot hide or reorder text.
- ``md``: Markdown/chat escaping (no link, emphasis, HTML or table syntax survives).
- ``xml_chars``: characters XML 1.0 cannot carry at all (even as references) become escapes.
- ``prom_label``: a Prometheus label value (backslash, double quote and newline escaped).
- ``slug``: the file-system/URL-safe name of a run's report folder.
"""

from __future__ import annotations

import hashlib
import re

from groundwork.core.pyrepr import _is_printable

_SAFE_SLUG = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,99}")


def _escape_char(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def visible(value, keep_newlines: bool = False) -> str:
    """str(value) with every non-printable character replaced by a visible escape."""
    s = "None" if value is None else str(value)
    if s.isprintable():   # fast path (no control, format, separator or unassigned character)
        return s
    if keep_newlines and "\n" in s:
        return "\n".join(visible(part) for part in s.split("\n"))
    out = []
    for ch in s:
        cp = ord(ch)
        if ch == "\n" and keep_newlines:
            out.append(ch)
        elif _is_printable(cp) and not 0xD800 <= cp <= 0xDFFF:
            out.append(ch)
        else:
            out.append(_escape_char(cp))
    return "".join(out)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#|~&:@])")


def md(value) -> str:
    """Escape a run-controlled string for Markdown (chat, e-mail): one line, no live syntax.

    Every punctuation character Markdown or chat renderers interpret is backslash-escaped, so
    ``[x](javascript:alert(1))`` stays text and ``<script>`` is not HTML; ``:`` and ``@`` are
    escaped too, so no auto-link or mention forms.
    """
    s = visible(value)
    return _MD_SPECIAL.sub(r"\\\1", s)


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def xml_chars(value) -> str:
    """str(value) with the characters XML 1.0 forbids replaced by visible escapes (then autoescaped)."""
    s = "None" if value is None else str(value)
    return _XML_BAD.sub(lambda m: _escape_char(ord(m.group())), s)


def prom_label(value) -> str:
    """A Prometheus text-format label value (without the surrounding quotes), one per string:
    a backslash of the string is doubled before ``visible`` writes its escapes, so an ESC
    (``\\x1b``) and the four characters ``\\x1b`` stay two labels (one series each: a repeated
    label set makes the whole file unreadable to Prometheus); then the format's own escapes."""
    s = visible(("" if value is None else str(value)).replace("\\", "\\\\"))
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def slug(invocation_id: str) -> str:
    """Folder/URL name of a run's report files: the id itself when it is a plain name (UUIDs
    are), else ``x-`` + 24 hex of its SHA-256. Never contains a slash, a colon or a dot-dot."""
    s = str(invocation_id)
    if _SAFE_SLUG.fullmatch(s) and ".." not in s and not s.startswith("x-"):
        return s
    return "x-" + hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:24]
