"""Canonical JSON bytes and content hashes under the four registered canonicalisations (docs/rules.md#canonical-json)."""

from __future__ import annotations

import hashlib
import json

from groundwork.core import native
from groundwork.core.pyrepr import pyrepr, pystr

REGISTERED = ("dd-envelope-json-v1", "dd-input-json-v1", "dd-json-document-v1", "json-sorted-utf8-v1")
PROJECTED = "json-sorted-utf8-v1"  # the one that hashes a projection of the record (project_fairsharing)
FAIRSHARING_FIELDS = ("fairsharing_id", "doi", "name", "abbreviation", "record_type", "status",
                      "description", "subjects", "domains")


class CanonicalisationError(ValueError):
    """Hashing failed; str(error) is the exact text the workbench prints."""


# groundwork/core/_canonical_native.c: exactly json.dumps' bytes for the types JSON parsers produce,
# or None (then json.dumps below decides). None when not built or GROUNDWORK_NATIVE=off.
_native = native.load("groundwork.core._canonical_native")


# Without the C extension: orjson writes every string, integer, boolean and null exactly as
# json.dumps(ensure_ascii=False) does (all escapes checked over every code point) and sorts keys
# in the same code point order.
# Floats differ only where it writes an exponent (always signed: e+ / e-) or a plain decimal
# below 1e-4 (Python writes 1e-05 where orjson writes 0.00001). Such a number token always holds
# one of these markers and starts right after ':', ',' or '[' (or at the very start): a marker
# elsewhere (inside a string: a UUID's "0e-7", a word like "re-run") changes nothing.
_MARKERS = (b"e+", b"e-", b"0.0000")
_NUMBER_CHARS = frozenset(b"0123456789.-")
_BEFORE_NUMBER = frozenset(b":,[")


def _orjson_may_differ(data: bytes) -> bool:
    """True when ``data`` (compact orjson output) may hold a float json.dumps writes otherwise."""
    for marker in _MARKERS:
        i = data.find(marker)
        while i != -1:
            j = i - 1
            while j >= 0 and data[j] in _NUMBER_CHARS:
                j -= 1
            if j < 0 or data[j] in _BEFORE_NUMBER:
                return True
            i = data.find(marker, i + 1)
    return False


def canonical_bytes(value, fast: bool = False) -> bytes:
    """Serialise like json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False), UTF-8.

    The C extension serialises any value it can (``fast`` then changes nothing). Without it,
    ``fast`` may be passed for a value orjson parsed (so it holds no integer beyond 64 bits, no
    NaN/Infinity and no lone surrogate): orjson then serialises it, unless its output could
    differ from json.dumps (see above) or it refuses the value (nesting deeper than
    254), in which case json.dumps does.
    """
    if _native is not None:
        data = _native.canonical(value)
        if data is not None:
            return data
    elif fast:
        import orjson  # here, not at the top: a drop-in process seldom needs it (~13 ms of imports)
        try:
            data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            data = None
        if data is not None and not _orjson_may_differ(data):
            return data
    # A value nested ~1,000 deep: json.dumps raises RecursionError, as the workbench's does;
    # each caller says what that means (docs/rules.md#canonical-json).
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates (docs/rules.md#numbers)
        raise CanonicalisationError(str(exc)) from None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def project_fairsharing(record: dict) -> dict:
    """The PROJECTED canonicalisation's projection: the FAIRSHARING_FIELDS, lists as sorted str() items."""
    out = {}
    for key in FAIRSHARING_FIELDS:
        v = record.get(key)
        if isinstance(v, list):
            v = sorted(pystr(item) for item in v)
        out[key] = v
    return out


def unknown_message(name) -> str:
    return f"unknown canonicalisation {pyrepr(pystr(name))}; registered: {list(REGISTERED)!r}"


def project(name, record):
    """Project a record under canonicalisation ``name``; raise CanonicalisationError if unknown."""
    if not isinstance(name, str) or name not in REGISTERED:
        raise CanonicalisationError(unknown_message(name))
    if name == PROJECTED:
        return project_fairsharing(record)
    return record


def content_hash(name, record, fast: bool = False) -> str:
    """Return the SHA-256 hex of the canonical bytes of ``record`` under ``name`` (``fast`` as
    for canonical_bytes)."""
    return sha256_hex(canonical_bytes(project(name, record), fast))


def content_hash_or_none(name, record, fast: bool = False) -> str | None:
    """``content_hash``, or None where it cannot be computed: a lone surrogate (CanonicalisationError)
    or a value nested past json.dumps's depth (RecursionError). For the hashes groundwork keeps for
    itself (an envelope's, an index line's, a class schema's, a request input's), which no
    workbench message prints (docs/rules.md#canonical-json)."""
    try:
        return content_hash(name, record, fast)
    except (CanonicalisationError, RecursionError):
        return None
