"""The archive-level inputs (runs/invocations.jsonl, runs/schemas/, ids claimed twice) as pure
functions over bytes and SQL tables: the local ingest (ingest/load.py) and `groundwork spark run`
(groundwork/spark/archive.py) call the same ones, so both give the same rows and issues.

Issues are (path, line, kind, message) tuples, as ``process_index_lines`` gives them."""

from __future__ import annotations

from groundwork.core.canonical import content_hash_or_none
from groundwork.core.jsontext import MAX_LINE, decode_utf8, dumps_doc, loads
from groundwork.ingest import issues as K
from groundwork.ingest.issues import Issues
from groundwork.ingest.scan import INDEX_FILE

INDEX_LINES = 2000  # invocations.jsonl lines per parse task (process_index_lines)
# ... and bytes: a block ends once its lines reach this many bytes (lines of up to MAX_LINE
# bytes each: 2,000 of them would hold the index whole, however large)
INDEX_BYTES = 4 << 20


def index_blocks(lines, first_line: int, issues: list):
    """Blocks of (line_no, raw line) of invocations.jsonl out of ``scan.split_lines``'s lines
    (numbered from ``first_line``); a line over MAX_LINE bytes becomes an issue in ``issues``."""
    return numbered_index_blocks(enumerate(lines, first_line), issues)


def numbered_index_blocks(numbered, issues: list):
    """Blocks of (line_no, raw line) of invocations.jsonl out of (line_no, raw line) pairs, in
    line order, where a line over MAX_LINE bytes is its length (an int) instead of its bytes: it
    becomes an issue in ``issues``. (A Spark task gets its share of the index numbered so.)"""
    buf = []
    size = 0
    for line_no, raw in numbered:
        if isinstance(raw, int):  # a line over MAX_LINE bytes, dropped as it streamed by
            issues.append((INDEX_FILE, line_no, K.LINE_TOO_LONG,
                           f"line is {raw:,} bytes, over {MAX_LINE // (1 << 20)} MiB; not loaded"))
            continue
        buf.append((line_no, raw))
        size += len(raw)
        if len(buf) >= INDEX_LINES or size >= INDEX_BYTES:
            yield buf
            buf = []
            size = 0
    if buf:
        yield buf


def index_duplicates(con, from_line: int = 1) -> list[tuple]:
    """Issues of the lines of table ``invocation_index`` (on DuckDB ``con``) repeating an
    invocation id of an earlier line, for the lines from ``from_line`` on. In SQL: memory stays
    flat however long the index is (an aggregate, not a window, which would hold every row)."""
    return [(INDEX_FILE, line, K.DUPLICATE_ID, f"invocation_id {inv} already indexed on line {first}")
            for line, inv, first in con.execute("""
                SELECT i.line_no, i.invocation_id, d.first FROM invocation_index i JOIN (
                    SELECT invocation_id, min(line_no) AS first FROM invocation_index
                    WHERE invocation_id IS NOT NULL GROUP BY invocation_id HAVING count(*) > 1) d
                  ON d.invocation_id = i.invocation_id
                WHERE i.line_no > d.first AND i.line_no >= $from ORDER BY i.line_no""",
                {"from": from_line}).fetchall()]


# The runs on disk whose envelope claims an invocation id another folder claims (as its envelope's
# id or as its name), with the folders claiming it too, over table ``runs`` (its invocation_id,
# run_path, envelope_invocation_id and missing): (invocation_id, run_path, envelope_invocation_id,
# others).
_FOUND_SQL = """
WITH present AS (SELECT invocation_id, run_path, envelope_invocation_id FROM runs
                 WHERE NOT missing AND envelope_invocation_id IS NOT NULL),
     -- two folders claim one id only if one of them has an envelope id not its
     -- name: the ids claimed by such folders are the only candidates (memory
     -- follows their number, not the archive's)
     odd AS (SELECT DISTINCT envelope_invocation_id AS claimed FROM present
             WHERE envelope_invocation_id <> invocation_id),
     claims AS (SELECT envelope_invocation_id AS claimed, invocation_id FROM present
                WHERE envelope_invocation_id IN (SELECT claimed FROM odd)
                UNION SELECT invocation_id AS claimed, invocation_id FROM present
                WHERE invocation_id IN (SELECT claimed FROM odd)),
     found AS (SELECT p.invocation_id, p.run_path, p.envelope_invocation_id,
                      string_agg(c.invocation_id, ', ' ORDER BY c.invocation_id) AS others
               FROM present p JOIN claims c ON c.claimed = p.envelope_invocation_id AND c.invocation_id <> p.invocation_id
               WHERE p.envelope_invocation_id IN (SELECT claimed FROM odd)
               GROUP BY p.invocation_id, p.run_path, p.envelope_invocation_id)
"""
# An envelope without an invocation_id (absent or null) has the envelope_invocation_id 'None' (its
# str()), as has one whose id is the string "None": only those envelopes are read to tell which.
_NO_ID_SQL = "coalesce(json_type(envelope_json, '$.invocation_id'), 'NULL') = 'NULL'"
_NO_ID = "the envelope has no invocation_id, nor have the envelopes of folder(s) "
_ALSO = " is also claimed by folder(s) "

# (invocation_id, path, message) of those runs, over table ``runs`` (also its envelope_json).
# Reading envelope_json is what costs (a compressed vector of envelopes per run read): it is read
# for the candidates whose envelope_invocation_id is 'None' only.
CLAIMS_SQL = _FOUND_SQL + f""",
     unnamed AS (SELECT invocation_id FROM runs WHERE envelope_invocation_id = 'None' AND {_NO_ID_SQL})
SELECT f.invocation_id, f.run_path || '/envelope.json',
       CASE WHEN f.invocation_id IN (SELECT invocation_id FROM unnamed) THEN '{_NO_ID}'
            ELSE 'invocation_id ' || f.envelope_invocation_id || '{_ALSO}' END || f.others
FROM found f
"""


def claims(con, kind: str) -> list[tuple]:
    """CLAIMS_SQL's rows over a warehouse (DuckDB ``con``), reading the envelope of only the
    candidates whose 'None' it cannot tell from their ``kind`` issues (duplicate ids) kept: such
    an issue, written by an ingest no earlier than the one that loaded the run's rows, was worded
    from the envelope the run has now. (At 100,000 runs CLAIMS_SQL read every envelope: 0.5 s.)"""
    found = con.execute(_FOUND_SQL + """,
        kept AS (SELECT i.invocation_id, bool_or(starts_with(i.message, $no_id)) AS no_id
                 FROM ingest_issues i JOIN runs r ON r.invocation_id = i.invocation_id
                 WHERE i.kind = $kind AND i.invocation_id IN (SELECT invocation_id FROM found)
                   AND i.ingest_id >= r.ingest_id
                 GROUP BY i.invocation_id)
        SELECT f.invocation_id, f.run_path || '/envelope.json', f.envelope_invocation_id, f.others,
               CASE WHEN f.envelope_invocation_id = 'None' THEN k.no_id ELSE false END
        FROM found f LEFT JOIN kept k ON k.invocation_id = f.invocation_id""",
                        {"no_id": _NO_ID, "kind": kind}).fetchall()
    unknown = [inv for inv, _, _, _, no_id in found if no_id is None]
    no_id = {inv for inv, _, _, _, known in found if known}
    if unknown:
        no_id.update(inv for (inv,) in con.execute(
            f"SELECT invocation_id FROM runs WHERE invocation_id IN (SELECT unnest($ids::VARCHAR[])) AND {_NO_ID_SQL}",
            {"ids": unknown}).fetchall())
    return [(inv, path, (_NO_ID if inv in no_id else f"invocation_id {claimed}{_ALSO}") + others)
            for inv, path, claimed, others, _ in found]


def schema_name_ok(name: str) -> bool:
    """Whether runs/schemas/``name`` is a class schema's name (<64-hex digest>.json), to be read."""
    digest = name[:-5] if name.endswith(".json") else None
    return digest is not None and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


NOT_A_SCHEMA = (K.UNEXPECTED_ENTRY, "not a <64-hex digest>.json class schema; ignored")


def schema_file(name: str, rel: str, size: int, data: bytes | None) -> tuple[tuple | None, list[tuple]]:
    """runs/schemas/``name`` (``schema_name_ok``; ``rel`` names it in issues) of ``size`` bytes,
    with its bytes (None, or at most MAX_LINE + 1 of them, when over MAX_LINE) -> (its
    class_schemas row (digest, computed_digest, schema_json), or None when too large; its issues)."""
    if size > MAX_LINE or data is None or len(data) > MAX_LINE:
        return None, [(rel, None, K.TOO_LARGE, f"over {MAX_LINE // (1 << 20)} MiB; not read")]
    digest = name[:-5]
    issues = Issues()
    text, problems = decode_utf8(data)
    for p in problems:
        issues.add(rel, p.line, p.kind, p.message)
    try:
        doc = loads(text)
    except (ValueError, RecursionError) as exc:
        issues.add(rel, getattr(exc, "lineno", None), K.MALFORMED_JSON, f"invalid JSON ({exc})")
        row = (digest, None, None)
    else:
        row = (digest, content_hash_or_none("dd-json-document-v1", doc), dumps_doc(doc))
    return row, [(path, line, kind, msg) for path, line, kind, msg, _effect in issues.items]
