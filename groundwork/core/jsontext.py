"""Pure helpers: bytes -> text -> JSON values exactly as the workbench (CPython 3.11) reads them.

Nothing here touches the file system or the warehouse. The JSON parser is orjson where it
provably gives the same value as ``json.loads`` and ``json.loads`` otherwise (docs/rules.md#numbers):

* orjson turns integers beyond 64 bits into floats -> any text holding a run of 19 or more
  digits goes to ``json.loads``;
* orjson rejects ``NaN``/``Infinity``, numbers that overflow a double and lone surrogate
  escapes, all of which Python accepts -> any orjson error falls back to ``json.loads``, which
  then either succeeds or raises the very error the workbench would raise.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from groundwork.core.pyrepr import nested_text, pyrepr, pystr

_LONG_DIGITS = re.compile(r"\d{19}")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
BOM = "\ufeff"
MAX_LINE = 16 * 1024 * 1024  # 16 MiB: DuckDB's and the OTLP receivers' per-object limit


_DIGIT_TABLE = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_RUN = b"0" * 19


def needs_exact(text: str) -> bool:
    """True when orjson may differ from json.loads on ``text`` (a run of >= 19 digits)."""
    return _LONG_DIGITS.search(text) is not None


def needs_exact_bytes(data: bytes) -> bool:
    """needs_exact() on raw file bytes, fast (a C-level translate and substring search).

    Non-ASCII digits cannot form a JSON number, so ASCII digits are all that matter."""
    return _RUN in data.translate(_DIGIT_TABLE)


# orjson nests to 1024 levels, json.loads only to its recursion limit (1000) less the caller's
# stack: a text that may nest that deep is parsed by json.loads alone, so that it raises
# RecursionError where the workbench's parser does. Fewer brackets than this cannot nest that deep.
_DEEP_BRACKETS = 900


def maybe_deep(text: str) -> bool:
    """True when ``text`` holds enough brackets to nest near json.loads' depth limit."""
    return len(text) >= 2 * _DEEP_BRACKETS and text.count("[") + text.count("{") >= _DEEP_BRACKETS


def parse(text: str, exact: bool, deep: bool = False):
    """``(value, fast)``: json.loads semantics; ``fast`` is True when orjson parsed the text, i.e.
    the value holds no integer beyond 64 bits, no NaN/Infinity and no lone surrogate, so orjson
    can also serialise it (see dumps). ``deep``: a text nested past json.loads' depth is parsed
    (by orjson, up to its 1024 levels) rather than refused as json.loads refuses it: for a file
    the workbench does not parse (request.json), as the C reader of ingest parses it."""
    if not exact and (deep or not maybe_deep(text)):
        import orjson  # here, not at the top: a drop-in process seldom needs it (~13 ms of imports)

        try:
            return orjson.loads(text), True
        except orjson.JSONDecodeError:
            pass
    return json.loads(text), False


def loads(text: str, exact: bool | None = None):
    """Parse JSON text with exactly the result (or the exception) of ``json.loads``.

    ``exact`` may be passed when the caller already knows whether ``text`` (or the file it came
    from) contains a long digit run; ``None`` means check.
    """
    if exact is None:
        exact = needs_exact(text)
    if not exact and not maybe_deep(text):
        import orjson

        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def dumps(value, fast: bool = False) -> str:
    """The raw-JSON text stored in ``*_json`` columns: exactly Python's json.dumps (ASCII-escaped,
    so lone surrogates stay representable); ``repr_json`` parses it back exactly.

    Plain printable ASCII strings (ids, names, modes) take a shortcut with the same result.
    ``fast`` is accepted for symmetry with dumps_doc and ignored.
    """
    kind = type(value)
    if kind is str and value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return '"' + value + '"'
    if value is None:
        return "null"
    try:
        if _ENCODE is not None and (kind is dict or kind is list):
            return "".join(_ENCODE(value, 0))
        return json.dumps(value)
    except RecursionError:
        return _dumps_deep(value, ", ", ": ", surrogates=True)


# json.dumps builds a new C encoder on every call (about half its cost for a small object); this
# one is built once with json.dumps's defaults, minus the circular-reference check that parsed
# JSON never needs. Same bytes (None when the C accelerator is missing: json.dumps then).
_ENCODE = (json.encoder.c_make_encoder(None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii,
                                       None, ": ", ", ", False, False, True)
           if json.encoder.c_make_encoder is not None else None)


def dumps_doc(value, fast: bool = False) -> str | None:
    """JSON text for a DuckDB JSON column (documents shown to people and queried with ->>).

    DuckDB's JSON type rejects lone surrogate escapes, so those are replaced by U+FFFD here
    (the exact values live in the VARCHAR ``*_json`` columns).
    """
    if fast:
        import orjson

        try:
            return orjson.dumps(value).decode("utf-8")
        except orjson.JSONEncodeError:
            pass
    try:
        text = json.dumps(value, separators=(",", ":"))
        if "\\ud" in text or "\\uD" in text:
            if has_lone_surrogate(value):
                text = json.dumps(_without_surrogates(value), separators=(",", ":"))
    except RecursionError:
        text = _dumps_deep(value, ",", ":", surrogates=False)
    return text


def _dumps_deep(value, item_sep: str, key_sep: str, *, surrogates: bool) -> str:
    """json.dumps(value, separators=(item_sep, key_sep)) of a parsed JSON value nested deeper
    than json.dumps can go (it recurses; a parser accepts up to ~1,000 levels): the same text,
    built without recursion. ``surrogates`` False replaces lone surrogates by U+FFFD (dumps_doc)."""
    enc = json.encoder.encode_basestring_ascii

    def string(v: str) -> str:
        return enc(v if surrogates else fix_surrogates(v))

    def scalar(v) -> str | None:
        if isinstance(v, str):
            return string(v)
        if v is None:
            return "null"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, int):
            return int.__repr__(v)
        if isinstance(v, float):
            return json.dumps(v)   # NaN, Infinity and float repr exactly as json.dumps writes them
        return None

    return nested_text(value, scalar, string, item_sep, key_sep)


def _without_surrogates(value):
    if isinstance(value, str):
        return fix_surrogates(value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {fix_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


SURROGATE_ESCAPE_BYTES = re.compile(SURROGATE_ESCAPE.pattern.encode("ascii"))


def may_hold_surrogate(text: str | bytes) -> bool:
    """Cheap pre-check: could ``text`` (or the raw bytes it was decoded from: faster) hold a
    \\udXXX escape?

    Most files hold no backslash at all, and a one-character search is a memchr: ~10x faster
    than searching for the three-character prefixes (4.6 -> 0.5 us per spans file)."""
    if type(text) is bytes:
        return b"\\" in text and SURROGATE_ESCAPE_BYTES.search(text) is not None
    return "\\" in text and SURROGATE_ESCAPE.search(text) is not None


def has_lone_surrogate(value) -> bool:
    """True when a parsed JSON value holds a lone surrogate (only JSON escapes can produce one)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def fix_surrogates(s: str) -> str:
    """Replace lone surrogates (never produced by strict UTF-8 decoding, only by JSON escapes)."""
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)


def vstr(value) -> str:
    """str() of a parsed JSON value, made storable (lone surrogates -> U+FFFD)."""
    if type(value) is str and value.isascii():
        return value
    s = pystr(value)
    if s.isascii():
        return s
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return fix_surrogates(s)


def json_type(value) -> str | None:
    """JSON type name of a parsed value; None for JSON null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class DecodeProblem(Exception):
    """Text could not be decoded as the workbench does; ``kind``/``line``/``message`` describe it."""

    def __init__(self, kind: str, message: str, line: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


def decode_utf8(data: bytes) -> tuple[str, list[DecodeProblem]]:
    """Decode like ``read_text(encoding="utf-8")`` would, but never fail.

    Returns the best-effort text (invalid bytes replaced by U+FFFD, a leading BOM removed)
    and the problems that make the workbench's own read fail: ``non-utf8`` (with the 1-based
    line of the first bad byte) and ``bom``.
    """
    problems: list[DecodeProblem] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(DecodeProblem(
            "non-utf8", f"invalid UTF-8 byte 0x{data[exc.start]:02x} at byte offset {exc.start}: {exc.reason}", line))
        text = data.decode("utf-8", "replace")
    if text.startswith(BOM):
        problems.append(DecodeProblem("bom", "file starts with a UTF-8 byte order mark (U+FEFF), which Python's json rejects", 1))
        text = text[1:]
    return text, problems


def strip0x(value: str) -> str:
    return value[2:] if value.startswith("0x") else value


class TimeProblem(ValueError):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def iso_times(value) -> tuple[int, float]:
    """ISO 8601 time -> (microseconds since the epoch, the workbench's own time key).

    The workbench parses with ``datetime.fromisoformat`` (Z as +00:00, offsets converted, K1)
    and compares ``int(moment.timestamp() * 1e9)``: the second value is that double before
    int(); trunc() of it orders spans exactly as the workbench does, also where the double can
    no longer tell microseconds apart (far-future times).

    Raises TimeProblem(kind='wrong-type' | 'bad-time' | 'naive-time').
    """
    if type(value) is str and len(value) == 27:
        second = _SECONDS.get(value[:19])
        if second is not None and value[19] == "." and value[26] == "Z" and (micro := value[20:26]).isdigit() \
                and micro.isascii():
            us = second + int(micro)
            # moment.timestamp() is (moment - epoch).total_seconds(): the int of microseconds
            # divided by 10**6 (int true division, correctly rounded): the same double as here.
            return us, us / 1_000_000 * 1e9
    if not isinstance(value, str):
        raise TimeProblem("wrong-type", f"{pystr_repr(value)} is not a string")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise TimeProblem("bad-time", f"{pystr_repr(value)} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise TimeProblem("naive-time", f"{pystr_repr(value)} has no UTC offset")
    delta = moment - _EPOCH
    us = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if len(value) == 27 and _UTC_MICROS.fullmatch(value):
        if len(_SECONDS) >= 4096:  # bounded, whatever the archive holds
            _SECONDS.clear()
        _SECONDS[value[:19]] = us - delta.microseconds
    return us, moment.timestamp() * 1e9


# The form the workbench writes (the OpenTelemetry SDK's to_json: YYYY-MM-DDTHH:MM:SS.ffffffZ)
# takes a shortcut with the same result once its second has been parsed (fromisoformat costs
# ~1 us a call, two per span line, and a run's spans mostly share their second).
_UTC_MICROS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z", re.ASCII)
_SECONDS: dict[str, int] = {}  # 'YYYY-MM-DDTHH:MM:SS' (UTC) -> its microseconds since the epoch


def iso_to_us(value) -> int:
    """ISO 8601 time -> microseconds since the epoch (UTC); see iso_times."""
    return iso_times(value)[0]


# The moments Python's datetime holds, in UTC: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z.
MIN_US, MAX_US = -62_135_596_800_000_000, 253_402_300_799_999_999


def iso_to_us_opt(value) -> int | None:
    """Lenient variant for informational columns (completed_at, issued_at): None when unusable,
    or when the moment in UTC is one Python's datetime cannot hold (0001-01-01T00:00:00+14:00 is
    in year 0, 9999-12-31T23:59:59-14:00 in year 10000): DuckDB would hand such a TIMESTAMPTZ
    back as a string, where every report and page expects a datetime."""
    try:
        us = iso_to_us(value)
    except (TimeProblem, OverflowError):
        return None
    return us if MIN_US <= us <= MAX_US else None


def pystr_repr(value) -> str:
    return vstr(pyrepr(value))


def is_blank(line: str) -> bool:
    """Blank per the workbench: empty after str.strip() (i.e. empty or all str.isspace())."""
    return not line.strip()
