"""Reference source check (docs/rules.md#source-check), written from the description alone (no
groundwork imports).

``load_sources`` raises ``ConfigError`` with the exact texts of
docs/rules.md#sources-configuration; ``check`` raises
``Uncheckable`` where the workbench's source check would crash (C5: a list/object
``grounding_mode``; a truthy non-list ``evidence`` or a non-object evidence element, C2).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

import yaml

from .canon import HashingError, content_hash

ELL = "\u2026"
ATTESTED = {"input_only", "none", "delegation"}


class ConfigError(Exception):
    """sources.yaml is unusable; str() is the workbench's configuration error text."""


class Uncheckable(Exception):
    """The workbench's source check would crash on this envelope; str() is the reason."""


@dataclass
class Copy:
    path: str
    id_field: object
    records: dict


@dataclass
class Copies:
    by_ref: dict = field(default_factory=dict)  # str(snapshot_ref) -> Copy


@dataclass
class SourceReport:
    verified: int = 0
    unresolved: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.violations


def _records(text: str) -> list:
    """docs/rules.md#source-copies: a JSON array if the text starts with `[` after leading
    whitespace, else JSON Lines."""
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_sources(yaml_path) -> Copies:
    path = str(yaml_path)
    try:
        with open(path, "rb") as fh:
            doc = yaml.safe_load(fh.read())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict) or not isinstance(doc.get("sources"), list):
        raise ConfigError(f"{path}: expected a top-level 'sources' list")
    base = os.path.dirname(path)
    copies = Copies()
    for entry in doc["sources"]:
        if not isinstance(entry, dict) or any(k not in entry for k in ("snapshot_refs", "path", "id_field", "sha256")):
            raise ConfigError(f"{path}: each source needs snapshot_refs, path, id_field and sha256")
        file = os.path.join(base, str(entry["path"]))
        try:
            with open(file, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ConfigError(f"source file {file}: {exc}") from None
        actual = hashlib.sha256(data).hexdigest()
        if actual != entry["sha256"]:
            raise ConfigError(f"source file {file} has sha256 {actual}, not the pinned {entry['sha256']}")
        id_field = entry["id_field"]
        records = {}
        for record in _records(data.decode("utf-8")):
            if not isinstance(record, dict) or not isinstance(record.get(id_field), str):
                raise ConfigError(f"source file {file}: a record has no string {id_field!r}")
            records[record[id_field]] = record  # the later record wins
        copy = Copy(file, id_field, records)
        for ref in entry["snapshot_refs"]:
            key = str(ref)
            if key in copies.by_ref:
                raise ConfigError(f"{path}: snapshot_ref {key!r} is listed twice")
            copies.by_ref[key] = copy
    return copies


def check(envelope, copies: Copies) -> SourceReport:
    """docs/rules.md#source-check, item by item."""
    if not isinstance(envelope, dict):
        raise Uncheckable("envelope is not a JSON object")
    mode = envelope.get("grounding_mode")
    if isinstance(mode, (list, dict)):
        raise Uncheckable("grounding_mode is a list or object (unhashable)")  # C5
    attested = mode in ATTESTED
    evidence = envelope.get("evidence") or []
    if not isinstance(evidence, list):
        raise Uncheckable("evidence is not a list")
    report = SourceReport()
    for ev in evidence:
        if not isinstance(ev, dict):
            raise Uncheckable("evidence element is not an object")
        sid = str(ev.get("source_id"))
        if attested and sid.startswith(("input:", "invocation:")):
            continue
        ref = ev.get("snapshot_ref")
        copy = copies.by_ref.get(str(ref))
        if copy is None:
            report.unresolved.append(f"{sid} ({ref})")
            continue
        record = copy.records.get(sid)
        if record is None:
            report.violations.append(f"S1: evidence cites {sid!r}, which {ref!r} does not hold")
            continue
        try:
            actual = content_hash(str(ev.get("canonicalisation")), record)
        except HashingError as exc:
            report.violations.append(f"S2: evidence {sid!r}: {exc}")
            continue
        claimed = str(ev.get("content_hash"))
        if actual != claimed:
            report.violations.append(f"S2: evidence {sid!r} hash {claimed[:12]}{ELL} does not match {ref!r}, "
                                     f"where the record hashes to {actual[:12]}{ELL}")
            continue
        report.verified += 1
    return report


def summary(report: SourceReport) -> str:
    """docs/rules.md#sources-text: the sources.txt text without its final newline."""
    text = f"sources: {report.verified} verified, {len(report.unresolved)} unresolved"
    if report.unresolved:
        text += " (no independent copy: " + ", ".join(report.unresolved) + ")"
    if report.violations:
        text += "; FAILED" + "".join(f"\n  - {v}" for v in report.violations)
    return text
