"""Fixed data pools of the synthetic fleet: agents, inputs, class schemas, source records.

Everything here is built once per process from a fixed seed (the pools do not depend on the
fleet's --seed, so the pinned snapshot files are the same for every archive) and carries its
precomputed hashes, so that generating a run never hashes a record or an input again.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import lru_cache

from groundwork.core.canonical import content_hash, project

POLICY_REF = "profile:default@v2"
POLICY_DIGEST = "e374cadfde97e8fb77f2f7573f825db262cb35d35c2f52395bcef9633464fda6"
CONTRACT = "0.7.0"
SDK = "1.45.2"
FS_REF = "snapshot:2026-09-04"
FS_STALE = "snapshot:2026-09-04 (stale)"
FC_REF = "packaged:sources.json"
FS_FILE = "snapshots/fairsharing.jsonl"
FC_FILE = "snapshots/sources.json"
PROBLEM_BASE = "https://w3id.org/data-director/problems/"

PRINCIPALS = (
    {"principal_id": "https://orcid.org/0000-0002-1825-0097", "name": "Josiah Carberry",
     "principal_kind": "person", "assurance": "asserted"},
    {"principal_id": "https://orcid.org/0000-0001-5109-3700", "name": "Ada Lovelace",
     "principal_kind": "person", "assurance": "asserted"},
    {"principal_id": "https://orcid.org/0000-0003-1419-2405", "name": "Grace Hopper",
     "principal_kind": "person", "assurance": "asserted"},
    {"principal_id": "mailto:data-steward@example.ac.uk", "name": "Research Data Service",
     "principal_kind": "accountable_role", "assurance": "asserted"},
    {"principal_id": "https://orcid.org/0000-0002-9079-593X", "name": "José Núñez",
     "principal_kind": "person", "assurance": "asserted"},
)

_WORDS = ("Soil", "Ocean", "Genome", "Protein", "Climate", "Clinical", "Agricultural", "Marine",
          "Neuro", "Imaging", "Chemical", "Ecology", "Plant", "Microbial", "Seismic", "Urban",
          "Linguistic", "Archival", "Données", "Café", "Metabolome", "Cell", "Rock", "Forest")
_KINDS = ("Ontology", "Vocabulary", "Format", "Schema", "Thesaurus", "Guideline", "Standard",
          "Identifier Scheme", "Markup Language", "Minimum Information Checklist")
_SUBJECTS = ("Agriculture", "Life Science", "Earth Science", "Chemistry", "Medicine", "Informatics",
             "Ecology", "Oceanography", "Linguistics", "Humanities", "Genomics", "Biodiversity",
             "Géologie", "Data Management")
_DOMAINS = ("Food", "Soil", "Water", "Health", "Climate", "Taxonomy", "Time", "Geospatial", "Text",
            "Sequence", "Image")
_RECORD_TYPES = ("terminology_artefact", "model_and_format", "reporting_guideline",
                 "identifier_schema")
_STATUS = ("ready", "ready", "ready", "in_development", "deprecated")
_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Agent:
    agent_id: str
    version: str
    mode: str
    input_class: str
    payload_class: str
    service: str = ""


AGENTS = {
    "r3": Agent("r3.standards-advisor", "0.2.0", "retrieval", "DatasetProfile", "Recommendations"),
    "fc": Agent("factcheck.verifier", "0.3.1", "retrieval", "Claim", "FactCheck"),
    "qr": Agent("quality.reviewer", "0.1.0", "input_only", "MetadataRecord", "QualityReview"),
    "hw": Agent("hello.world", "0.1.0", "none", "Salutation", "Greeting"),
    "ds": Agent("director.stub", "0.1.0", "delegation", "Message", "Reply"),
}


@dataclass
class Record:
    """One source record with its evidence-ready forms."""
    sid: str
    record: dict
    canon: str
    chash: str
    content: dict | None       # projected content carried in evidence (R3), None when omitted
    uri: str | None


@dataclass
class Pools:
    fs: list[Record]
    fc: list[Record]
    inputs: dict[str, list[tuple[dict, str]]]      # agent key -> [(input doc, input hash)]
    schemas: dict[str, tuple[str, bytes]]          # class name -> (digest, file bytes)
    fs_bytes: bytes
    fc_bytes: bytes
    fs_sha: str = ""
    fc_sha: str = ""
    fs_by_sid: dict = field(default_factory=dict)


def _fs_record(rng: random.Random, i: int) -> dict:
    suffix = "".join(rng.choice(_B36) for _ in range(6)) + (f"{i:x}" if i >= 400 else "")
    fid = f"FAIRsharing.{suffix}"
    name = f"{rng.choice(_WORDS)} {rng.choice(_KINDS)}"
    abbrev = "".join(w[0] for w in name.split()).upper() + str(i)
    rec: dict = {"fairsharing_id": fid, "numeric_id": 1000 + i, "doi": f"10.25504/{fid}",
                 "name": name}
    if rng.random() < 0.85:
        rec["abbreviation"] = abbrev
    rec["registry"] = rng.choice(("Standard", "Database", "Policy"))
    rec["record_type"] = rng.choice(_RECORD_TYPES)
    rec["status"] = rng.choice(_STATUS)
    if rng.random() < 0.9:
        rec["description"] = (f"A {rec['record_type'].replace('_', ' ')} for "
                              f"{rng.choice(_WORDS).lower()} data, maintained by a community.")
    rec["homepage"] = f"https://example.org/{suffix}"
    rec["subjects"] = rng.sample(_SUBJECTS, rng.randint(0, 3))
    rec["domains"] = rng.sample(_DOMAINS, rng.randint(0, 2))
    rec["subject_iris"] = [f"http://edamontology.org/topic_{rng.randint(1000, 4000)}"
                           for _ in range(rng.randint(0, 2))]
    rec["source_uri"] = f"https://fairsharing.org/{1000 + i}"
    return rec


def _fc_record(rng: random.Random, i: int) -> dict:
    w = rng.choice(_WORDS)
    return {"source_id": f"src:fc-{i:04d}", "title": f"{w} fact sheet {i}",
            "text": f"{w} records are kept for {rng.randint(2, 30)} years.",
            "uri": (f"https://example.org/facts/{i}" if rng.random() < 0.8 else None)}


def _schema(cls: str, props: dict) -> dict:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": cls, "type": "object",
            "properties": {"schema_class": {"const": cls}, **props}, "required": ["schema_class"]}


_GROUNDED = {"grounded_on": {"type": "array", "items": {"$ref": "#/$defs/GroundingRef"}}}


_SIZE = [400]


def set_records(n: int) -> None:
    """Number of records in the pinned FAIRsharing snapshot (default 400)."""
    _SIZE[0] = n


def pools() -> Pools:
    return _pools(_SIZE[0])


@lru_cache(maxsize=2)
def _pools(n_records: int) -> Pools:
    rng = random.Random(20260904)
    fs_recs = sorted((_fs_record(rng, i) for i in range(n_records)), key=lambda r: r["fairsharing_id"])
    seen, uniq = set(), []
    for r in fs_recs:
        if r["fairsharing_id"] not in seen:
            seen.add(r["fairsharing_id"])
            uniq.append(r)
    fs_bytes = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                       for r in uniq).encode("utf-8")
    fs = [Record(r["fairsharing_id"], r, "json-sorted-utf8-v1",
                 content_hash("json-sorted-utf8-v1", r), project("json-sorted-utf8-v1", r),
                 r["source_uri"]) for r in uniq]
    fc_rows = [_fc_record(rng, i) for i in range(1, 151)]
    fc_bytes = json.dumps(fc_rows, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
    fc = [Record(r["source_id"], r, "dd-json-document-v1", content_hash("dd-json-document-v1", r),
                 None, r["uri"]) for r in fc_rows]

    inputs: dict[str, list[tuple[dict, str]]] = {}
    docs = {
        "r3": lambda i: {"schema_class": "DatasetProfile",
                         "title": f"{rng.choice(_WORDS)} survey {i}",
                         "keywords": rng.sample(("soil", "agriculture", "ocean", "genome", "time",
                                                 "climate", "protein", "café"), rng.randint(0, 3)),
                         "themes": [], "media_types": rng.sample(("text/csv", "application/json",
                                                                   "image/tiff"), 1),
                         "fields": []},
        "fc": lambda i: {"schema_class": "Claim",
                         "text": f"{rng.choice(_WORDS)} records are kept for {rng.randint(2, 30)} years."},
        "qr": lambda i: {"schema_class": "MetadataRecord",
                         "identifier": f"https://doi.org/10.15131/shef.data.{i:08d}",
                         "title": f"{rng.choice(_WORDS)} chemistry survey {i}",
                         "licence": "https://creativecommons.org/licenses/by/4.0/",
                         "creators": ["Example Researcher"], "keywords": []},
        "hw": lambda i: {"schema_class": "Salutation",
                         "greeted_name": rng.choice(("Grace", "Ada", "Alan", "Zoë", "Amélie", "Ngozi")),
                         "language": rng.choice(("en", "fr", "de"))},
        "ds": lambda i: {"schema_class": "Message",
                         "message_text": rng.choice(("Say hello", "Review this record",
                                                     "Which standards fit my data?",
                                                     "Check the retention claim")),
                         "history": []},
    }
    for key, make in docs.items():
        lst = []
        for i in range(48):
            doc = make(i)
            lst.append((doc, content_hash("dd-input-json-v1", doc)))
        inputs[key] = lst

    schemas: dict[str, tuple[str, bytes]] = {}
    classes = {
        "DatasetProfile": {"title": {"type": "string"}, "keywords": {"type": "array"}},
        "Claim": {"text": {"type": "string"}},
        "MetadataRecord": {"identifier": {"type": "string"}, "title": {"type": "string"}},
        "Salutation": {"greeted_name": {"type": "string"}},
        "Message": {"message_text": {"type": "string"}, "history": {"type": "array"}},
        "Recommendations": {**_GROUNDED, "items": {"type": "array"}, "searched": {"type": "object"}},
        "FactCheck": {**_GROUNDED, "verdict": {"enum": ["supported", "refuted", "unverifiable"]}},
        "QualityReview": {**_GROUNDED, "score": {"type": "number"}, "findings": {"type": "array"}},
        "Greeting": {**_GROUNDED, "greeting_text": {"type": "string"}},
        "Reply": {**_GROUNDED, "reply_text": {"type": "string"}},
    }
    for cls, props in classes.items():
        doc = _schema(cls, props)
        schemas[cls] = (content_hash("dd-json-document-v1", doc), json.dumps(doc, indent=2).encode("ascii"))
    import hashlib

    return Pools(fs, fc, inputs, schemas, fs_bytes, fc_bytes,
                 hashlib.sha256(fs_bytes).hexdigest(), hashlib.sha256(fc_bytes).hexdigest(),
                 {r.sid: r for r in fs})
