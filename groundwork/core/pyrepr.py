"""Python repr() of parsed JSON values, byte for byte as CPython 3.11 prints them (docs/rules.md#repr).

The printable-character table is pinned to Unicode 14.0 (Python 3.11) so that messages do not
change with the Python that runs groundwork (docs/rules.md#repr).
"""

from __future__ import annotations

import bisect
import json
from functools import lru_cache
from pathlib import Path

_TABLE = Path(__file__).with_name("unicode14_nonprintable.txt")


@lru_cache(maxsize=1)
def _nonprintable() -> tuple[list[int], list[int]]:
    starts, ends = [], []
    for line in _TABLE.read_text(encoding="ascii").splitlines():
        if line and not line.startswith("#"):
            a, b = line.split()
            starts.append(int(a, 16))
            ends.append(int(b, 16))
    return starts, ends


def _is_printable(cp: int) -> bool:
    if 0x20 <= cp < 0x7F:
        return True
    starts, ends = _nonprintable()
    i = bisect.bisect_right(starts, cp) - 1
    return not (i >= 0 and cp <= ends[i])


def repr_str(s: str) -> str:
    """Return repr(s) as Python 3.11 writes it.

    >>> repr_str("it's")
    '"it\\'s"'
    >>> repr_str('a\\nb')
    "'a\\\\nb'"
    """
    if s.isascii() and s.isprintable():
        return repr(s)  # printable ASCII: the same in every Python version, and ~5x faster
    quote = '"' if ("'" in s and '"' not in s) else "'"
    out = [quote]
    for ch in s:
        cp = ord(ch)
        if ch == quote or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif _is_printable(cp):
            out.append(ch)
        elif cp < 0x100:
            out.append(f"\\x{cp:02x}")
        elif cp < 0x10000:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(f"\\U{cp:08x}")
    out.append(quote)
    return "".join(out)


def _scalar_repr(value) -> str | None:
    """repr of a JSON scalar; None for a list or object."""
    if isinstance(value, str):
        return repr_str(value)
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, dict)):
        return None
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def nested_text(value, scalar, key, item_sep: str, key_sep: str) -> str:
    """The text of a parsed JSON value written without recursion, however deep it nests: a list
    as ``[a<item_sep>b]``, an object as ``{key(k)<key_sep>v<item_sep>...}``, anything else as
    ``scalar(v)`` (None for a list or object). Python's own repr and json.dumps recurse; a value
    nested hundreds of levels deep (any depth a parser accepts) must not exhaust the stack here."""
    out: list[str] = []
    todo: list = [(False, value)]   # (is literal text, value or text), popped from the end
    while todo:
        literal, item = todo.pop()
        if literal:
            out.append(item)
            continue
        text = scalar(item)
        if text is not None:
            out.append(text)
            continue
        is_object = isinstance(item, dict)
        parts = list(item.items()) if is_object else [(None, v) for v in item]
        out.append("{" if is_object else "[")
        todo.append((True, "}" if is_object else "]"))
        for i in range(len(parts) - 1, -1, -1):   # pushed last to first: popped in order
            k, v = parts[i]
            todo.append((False, v))
            if is_object:
                todo.append((True, key(k) + key_sep))
            if i:
                todo.append((True, item_sep))
    return "".join(out)


def _repr_key(key) -> str:
    """The repr of an object's key: a JSON key is a string (a YAML mapping's may be anything)."""
    if type(key) is not str:
        raise TypeError(f"not a JSON key: {type(key).__name__}")
    return repr_str(key)


def pyrepr(value) -> str:
    """Return the Python repr of a parsed JSON value (dict order kept), without recursion
    (``nested_text``); TypeError for what JSON does not hold (a YAML date, a mapping's number key)."""
    if type(value) is str:
        return repr_str(value)
    text = _scalar_repr(value)
    return text if text is not None else nested_text(value, _scalar_repr, _repr_key, ", ", ": ")


def pystr(value) -> str:
    """Return Python's str() of a parsed JSON value (docs/rules.md#str)."""
    if isinstance(value, str):
        return value
    return pyrepr(value)


def loads_exact(text: str):
    """Parse JSON text exactly as Python's json module does (ints stay ints, last duplicate key wins)."""
    return json.loads(text)


def repr_json(text: str | None) -> str:
    """Return the Python repr of the value stored as JSON text (NULL/None -> 'None')."""
    if text is None or text == "null":
        return "None"
    # A JSON string without escapes is its own text between the quotes (fast path).
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text:
        return repr_str(text[1:-1])
    return pyrepr(loads_exact(text))


def repr_str_json(text: str | None, fallback: str | None = None) -> str:
    """Return repr(str(value)) of the value stored as JSON text.

    The rules compare str() forms (docs/rules.md#derived-relations, docs/rules.md#source-check) and print them with repr; taking the
    value from its JSON text keeps characters a VARCHAR cannot hold (lone surrogates). Without
    JSON text, ``fallback`` (the str() form) is printed, or 'None'.
    """
    if text is None:
        return repr_str("None" if fallback is None else fallback)
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text:
        return repr_str(text[1:-1])
    return repr_str(pystr(loads_exact(text)))


def repr_member_json(text: str | None, key: str, fallback: str | None = None) -> str:
    """Return repr(str(value[key])) of the object stored as JSON text; without JSON text,
    ``fallback`` (that member's str() form as a VARCHAR holds it) is printed, as
    ``repr_str_json`` does. The rules give the text only where the VARCHAR may have lost a lone
    surrogate (it holds U+FFFD): a grounded reference's source id (docs/rules.md#repr)."""
    if text is None:
        return repr_str("None" if fallback is None else fallback)
    value = loads_exact(text)
    return repr_str(pystr(value.get(key) if isinstance(value, dict) else None))
