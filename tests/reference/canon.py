"""Reference canonicalisations and hashes (docs/rules.md#canonical-json), written from the
description alone.

Deliberately independent of ``groundwork.core.canonical``: the reference must not share code with the
implementation it checks. It relies on CPython 3.11's ``json``/``str`` behaviour, which is what
the description assumes.
"""

from __future__ import annotations

import hashlib
import json

REGISTERED = ["dd-envelope-json-v1", "dd-input-json-v1", "dd-json-document-v1", "json-sorted-utf8-v1"]
FAIRSHARING_KEYS = ["fairsharing_id", "doi", "name", "abbreviation", "record_type", "status",
                    "description", "subjects", "domains"]


class HashingError(Exception):
    """Hashing failed; str() is the text the workbench prints after `evidence 'x': `."""


def unknown_canonicalisation(name_str: str) -> str:
    # K2: the name shown is str() of the raw value, then repr'd.
    return f"unknown canonicalisation {name_str!r}; registered: {REGISTERED!r}"


def projection(name_str: str, document):
    if name_str not in REGISTERED:
        raise HashingError(unknown_canonicalisation(name_str))
    if name_str != "json-sorted-utf8-v1":
        return document
    out = {}
    for key in FAIRSHARING_KEYS:
        value = document.get(key)
        if isinstance(value, list):
            value = sorted(str(item) for item in value)
        out[key] = value
    return out


def content_hash(name_str: str, document) -> str:
    """SHA-256 hex of the canonical bytes of ``document`` under canonicalisation ``name_str``."""
    projected = projection(name_str, document)
    text = json.dumps(projected, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates (docs/rules.md#numbers)
        raise HashingError(str(exc)) from None
    return hashlib.sha256(data).hexdigest()
