"""Helpers of the tests of `groundwork serve`: warehouses to serve (the example, one after a
nightly, one whose every run-controlled string is hostile) and the app on a real loopback port."""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import uvicorn
from typer.testing import CliRunner

from groundwork.cli import app as cli_app
from groundwork.core.warehouse import connect
from groundwork.serve.app import create_app
from groundwork.serve.server import address, bind
from ingest_support import EXAMPLE
from report_rows import add_nightly, add_pass, add_run, add_verdict

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_WAREHOUSE = ROOT / "warehouse.duckdb.example"
ARTIFACTS = ROOT / "tests" / "artifacts"

EVIL = "<script>alert(1)</script>\"'</textarea><img src=x onerror=alert(2)>javascript:alert(1)\u202eevil\x07"
EVIL_ID = "javascript:alert(1)//<b>\u202e?x=1#frag"
EVIL_MSG = f"G2: payload rests on {EVIL!r} which was not retrieved </pre><script>alert(5)</script>"


def nightly_warehouse(base: Path) -> tuple[Path, Path]:
    """The example archive after one nightly (exit 1: every failing run is new): the warehouse and
    the nightly's report folder."""
    archive = base / "archive"
    shutil.copytree(EXAMPLE, archive)
    warehouse, out = base / "w.duckdb", base / "reports"
    r = CliRunner().invoke(cli_app, ["nightly", str(archive / "runs"), "--sources", str(archive / "sources.yaml"),
                                     "--warehouse", str(warehouse), "--out", str(out)])
    assert r.exit_code == 1, r.output
    return warehouse, out


def hostile_warehouse(path: Path) -> Path:
    """A warehouse whose agent ids, run ids, modes, span names, messages and texts are hostile."""
    con = connect(path)
    spans = [
        {"name": "invoke_agent", "span_id": "r00t", "parent_id": None, "start": 0, "end": 1000, "dd_agent_id": EVIL},
        {"name": EVIL, "span_id": "0dd", "parent_id": "r00t", "start": 10, "end": 20},
        {"name": "retrieval", "span_id": "5ea", "parent_id": "r00t", "start": 30, "end": 40,
         "dd_source_id": EVIL, "dd_content_hash": EVIL},
    ]
    add_run(con, EVIL_ID, agent=EVIL, mode=EVIL, spans=spans, refs=[(EVIL, "a" * 64)], evidence=[(EVIL, EVIL)],
            recorded_grounding="grounding: passed [" + EVIL + "] (0 retrieval, 0 chat spans)\n")
    add_run(con, "plain-run", agent="fake.none", mode="none")
    add_pass(con, 1, rules="G0,G2")
    add_pass(con, 2, "verify", "S1,S2")
    add_verdict(con, 1, EVIL_ID, [("G2", EVIL_MSG)], mode=EVIL)
    add_verdict(con, 1, "plain-run", [("N1", "N1: 1 chat span(s) in an agent that declared no model call")], mode="none")
    add_verdict(con, 2, EVIL_ID, [("S1", f"S1: evidence cites {EVIL!r}, which 'snap' does not hold")], kind="verify")
    add_verdict(con, 2, "plain-run", kind="verify")
    add_nightly(con, 1, 1, 2, exit_status=1)
    con.close()
    return path


@contextlib.contextmanager
def live_server(warehouse: Path, **options):
    """The app over ``warehouse`` served by uvicorn on an ephemeral loopback port (in a thread of
    this process); yields its base URL."""
    app = create_app(warehouse, **options)
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    try:
        yield address(sock)
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
        app.state.snapshots.close()


class Doc(HTMLParser):
    """Tags, attributes and the text of table #runs rows."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def links(self, prefix: str = "") -> list[str]:
        return [a["href"] for t, a in self.tags if t == "a" and a.get("href", "").startswith(prefix)]
