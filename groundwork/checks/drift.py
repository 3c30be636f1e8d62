"""Snapshot drift: which historical evidence, verified against an old source copy, a newer copy
no longer supports.

Given two entries of a sources.yaml (the old copy named by ``--from REF``, the newer one by
``--to REF``), every evidence item in the warehouse that the source check verifies against the
old copy (its snapshot_ref is one of the old entry's refs, the record exists there and hashes to
the item's content_hash under its canonicalisation) is joined to the new copy by source_id:

- ``gone``: the new copy holds no record with that id;
- ``changed``: the new copy's record hashes differently under the item's canonicalisation.

:func:`drift` returns plain rows (items, and summaries by source, by agent and by run) for the
CLI and for reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from groundwork.core.errors import GroundworkError
from groundwork.core.pyrepr import pyrepr
from groundwork.checks.sources import LoadedSources, SourceEntry, load_into_warehouse

# The record hash the source check uses for an item (same choice as sql/rules/S2.sql).
_HASH = """CASE WHEN {i}.canonicalisation = 'json-sorted-utf8-v1' THEN {r}.hash_fairsharing
     WHEN {i}.canonicalisation IN ('dd-envelope-json-v1', 'dd-input-json-v1', 'dd-json-document-v1')
     THEN {r}.hash_identity END"""

ITEMS_SQL = f"""
WITH verified AS (
    SELECT i.invocation_id, i.ord, i.agent_id, i.source_id, i.snapshot_ref, i.canonicalisation,
           i.content_hash
    FROM source_check_items i
    JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = $config_id
                       AND sr.entry_index = $from_index
    JOIN source_records o ON o.copy_id = $from_copy AND o.record_id = i.source_id
    WHERE {_HASH.format(i='i', r='o')} = i.content_hash
)
SELECT v.invocation_id, v.ord, v.agent_id, v.source_id, v.snapshot_ref, v.canonicalisation,
       v.content_hash,
       CASE WHEN n.record_id IS NULL THEN 'gone' ELSE 'changed' END AS status,
       {_HASH.format(i='v', r='n')} AS new_hash
FROM verified v
LEFT JOIN source_records n ON n.copy_id = $to_copy AND n.record_id = v.source_id
WHERE n.record_id IS NULL
   OR {_HASH.format(i='v', r='n')} IS NULL
   OR {_HASH.format(i='v', r='n')} <> v.content_hash
ORDER BY v.invocation_id, v.ord
"""

VERIFIED_SQL = f"""
SELECT count(*), count(DISTINCT i.invocation_id)
FROM source_check_items i
JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = $config_id
                   AND sr.entry_index = $from_index
JOIN source_records o ON o.copy_id = $from_copy AND o.record_id = i.source_id
WHERE {_HASH.format(i='i', r='o')} = i.content_hash
"""

# Record-level difference of the two copies (whole records, whatever evidence cites).
COPY_DIFF_SQL = """
SELECT count(*) FILTER (WHERE o.record_id IS NOT NULL AND n.record_id IS NOT NULL
                        AND o.record_json <> n.record_json)          AS records_changed,
       count(*) FILTER (WHERE n.record_id IS NULL)                   AS records_gone,
       count(*) FILTER (WHERE o.record_id IS NULL)                   AS records_added,
       count(o.record_id)                                            AS from_records,
       count(n.record_id)                                            AS to_records
FROM (SELECT record_id, record_json FROM source_records WHERE copy_id = $from_copy) o
FULL OUTER JOIN (SELECT record_id, record_json FROM source_records WHERE copy_id = $to_copy) n
  ON n.record_id = o.record_id
"""


@dataclass
class DriftResult:
    sources_path: str
    from_ref: str
    to_ref: str
    source: dict                                         # one summary row for the pair of copies
    items: list[dict] = field(default_factory=list)      # one row per drifted evidence item
    by_agent: list[dict] = field(default_factory=list)
    by_run: list[dict] = field(default_factory=list)
    loaded: LoadedSources | None = None

    @property
    def drifted(self) -> bool:
        return bool(self.items)


def _entry(loaded: LoadedSources, ref: str, option: str) -> SourceEntry:
    entry = loaded.config.entry_for(ref)
    if entry is None:
        raise GroundworkError(f"{loaded.config.path}: no source lists snapshot_ref {pyrepr(ref)} (given as {option})")
    return entry


def _dicts(cur) -> list[dict]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def drift(con, sources_path, from_ref: str, to_ref: str) -> DriftResult:
    """Report evidence verified against ``from_ref``'s copy that ``to_ref``'s copy no longer matches."""
    loaded = load_into_warehouse(con, sources_path)
    old = _entry(loaded, from_ref, "--from")
    new = _entry(loaded, to_ref, "--to")
    params = {"config_id": loaded.config_id, "from_index": old.index, "from_copy": old.copy_id,
              "to_copy": new.copy_id}
    items = _dicts(con.execute(ITEMS_SQL, params))
    verified_items, verified_runs = con.execute(
        VERIFIED_SQL, {k: params[k] for k in ("config_id", "from_index", "from_copy")}).fetchone()
    diff = _dicts(con.execute(COPY_DIFF_SQL, {"from_copy": old.copy_id, "to_copy": new.copy_id}))[0]

    by_agent: dict = {}
    by_run: dict = {}
    for item in items:
        a = by_agent.setdefault(item["agent_id"], {"agent_id": item["agent_id"], "item_count": 0, "changed": 0,
                                                   "gone": 0, "runs": set(), "records": set()})
        r = by_run.setdefault(item["invocation_id"], {"invocation_id": item["invocation_id"],
                                                       "agent_id": item["agent_id"], "item_count": 0, "changed": 0,
                                                       "gone": 0, "source_ids": []})
        for row in (a, r):
            row["item_count"] += 1
            row[item["status"]] += 1
        a["runs"].add(item["invocation_id"])
        a["records"].add(item["source_id"])
        if item["source_id"] not in r["source_ids"]:
            r["source_ids"].append(item["source_id"])
    agents = []
    for a in by_agent.values():
        agents.append({**{k: v for k, v in a.items() if k not in ("runs", "records")},
                       "runs": len(a["runs"]), "records": len(a["records"])})
    agents.sort(key=lambda a: (-a["item_count"], "" if a["agent_id"] is None else a["agent_id"]))

    source = {
        "from_ref": from_ref, "to_ref": to_ref,
        "from_path": old.path, "to_path": new.path,
        "from_sha256": old.pin, "to_sha256": new.pin,
        "id_field": str(new.id_field) if old.id_field == new.id_field else f"{old.id_field} -> {new.id_field}",
        **diff,
        "verified_items": verified_items, "verified_runs": verified_runs,
        "drifted_items": len(items),
        "changed": sum(1 for i in items if i["status"] == "changed"),
        "gone": sum(1 for i in items if i["status"] == "gone"),
        "drifted_runs": len(by_run),
        "drifted_records": len({i["source_id"] for i in items}),
    }
    return DriftResult(sources_path=str(sources_path), from_ref=from_ref, to_ref=to_ref, source=source,
                       items=items, by_agent=agents, by_run=list(by_run.values()), loaded=loaded)
