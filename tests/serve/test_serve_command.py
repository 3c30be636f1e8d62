"""`groundwork serve` as a user starts it, and the server while another process writes the
warehouse: it keeps answering from its copy, says the warehouse is being written, and shows the
new data once the writer has let go."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest


from serve_support import EXAMPLE_WAREHOUSE, ROOT, live_server

GROUNDWORK = [sys.executable, "-c", "from groundwork.cli import main; main()"]


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode("utf-8")


def start(*args, cwd=None, env=None) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*GROUNDWORK, "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, env=env)
    line = proc.stdout.readline()
    return proc, line


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_its_address_and_stops_cleanly(tmp_path, stop):
    # its copies of the warehouse go to TMPDIR; a clean stop removes them
    temp = tmp_path / "temp"
    temp.mkdir()
    proc, line = start("--warehouse", str(EXAMPLE_WAREHOUSE), "--port", "0", env=dict(os.environ, TMPDIR=str(temp)))
    try:
        m = re.fullmatch(r"groundwork serve: (http://127\.0\.0\.1:(\d+)/) \(warehouse .*, read-only; Ctrl-C stops\)\n", line)
        assert m, line
        assert int(m.group(2)) > 0
        html = get(m.group(1))
        assert "99 runs" in html
        assert [p.name[:len("groundwork-serve-")] for p in temp.iterdir()] == ["groundwork-serve-"]
    finally:
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert list(temp.iterdir()) == []


def test_on_loopback_only_loopback_host_names_are_answered():
    """DNS rebinding: a page of evil.example re-pointed at 127.0.0.1 sends Host: evil.example."""
    import http.client
    proc, line = start("--warehouse", str(EXAMPLE_WAREHOUSE), "--port", "0")
    try:
        port = int(re.search(r":(\d+)/", line).group(1))
        for host, status in ((f"127.0.0.1:{port}", 200), (f"localhost:{port}", 200), ("evil.example", 400)):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/sql?q=SELECT+1&format=json", headers={"Host": host})
            response = conn.getresponse()
            assert response.status == status, host
            conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_a_missing_or_foreign_warehouse_is_one_line_and_status_2(tmp_path):
    r = subprocess.run([*GROUNDWORK, "serve", "--warehouse", str(tmp_path / "none.duckdb"), "--port", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("groundwork: error: warehouse ") and "does not exist" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "none.duckdb").exists()
    (tmp_path / "notes.txt").write_text("hello\n")
    r = subprocess.run([*GROUNDWORK, "serve", "--warehouse", str(tmp_path / "notes.txt"), "--port", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is not a groundwork warehouse" in r.stderr and r.stderr.count("\n") == 1
    # a warehouse of a newer groundwork: refused, untouched, nothing made beside it
    import duckdb
    from groundwork.core.warehouse import connect, schema_version
    newer = tmp_path / "newer" / "w.duckdb"
    newer.parent.mkdir()
    connect(newer).close()
    con = duckdb.connect(str(newer))
    con.execute("UPDATE schema_info SET value = $v WHERE key = 'schema_version'", {"v": str(schema_version() + 1)})
    con.close()
    was = newer.read_bytes()
    r = subprocess.run([*GROUNDWORK, "serve", "--warehouse", str(newer), "--port", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "was written by a newer groundwork" in r.stderr and r.stderr.count("\n") == 1
    assert newer.read_bytes() == was and [p.name for p in newer.parent.iterdir()] == ["w.duckdb"]


def test_a_port_in_use_is_named(tmp_path):
    proc, line = start("--warehouse", str(EXAMPLE_WAREHOUSE), "--port", "0")
    try:
        port = re.search(r":(\d+)/", line).group(1)
        r = subprocess.run([*GROUNDWORK, "serve", "--warehouse", str(EXAMPLE_WAREHOUSE), "--port", port],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_a_port_out_of_range_is_refused_as_usage(tmp_path):
    r = subprocess.run([*GROUNDWORK, "serve", "--warehouse", str(EXAMPLE_WAREHOUSE), "--port", "70000"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert "65535" in r.stderr


def test_a_client_breaking_http_mid_request_costs_the_log_one_line_not_a_traceback():
    """A malformed chunked body to a route the app answers at once: uvicorn then fails to send
    its 400 and logged "Exception in ASGI application" with a traceback on the server's stderr."""
    import socket

    proc, line = start("--warehouse", str(EXAMPLE_WAREHOUSE), "--port", "0")
    try:
        port = int(re.search(r":(\d+)/", line).group(1))
        for target in (b"POST /sql", b"GET /nope"):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                s.sendall(target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                          b"Connection: close\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
                reply = b""
                while chunk := s.recv(65536):
                    reply += chunk
            assert reply.startswith(b"HTTP/1.1 4"), reply[:100]
        assert get(line.split()[2]).count("99 runs") >= 1   # still serving
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Traceback" not in err
    errors = [row for row in err.splitlines() if row.startswith("ERROR")]
    assert all("LocalProtocolError" in row for row in errors), err


# A writer in another process, as a nightly or a watch batch is: it opens the warehouse for writing,
# changes an agent id, holds the file until told to stop (a line on stdin), then closes.
WRITER = textwrap.dedent("""
    import sys
    from groundwork.core.warehouse import connect
    con = connect(sys.argv[1])
    con.execute("UPDATE runs SET agent_id = 'agent.renamed' WHERE agent_id = 'quality.reviewer'")
    print("holding", flush=True)
    sys.stdin.readline()
    con.close()
    print("closed", flush=True)
""")


def test_pages_keep_answering_while_a_writer_holds_the_warehouse(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    shutil.copyfile(EXAMPLE_WAREHOUSE, warehouse)
    with live_server(warehouse) as url:
        from groundwork.serve import snapshot
        assert "quality.reviewer" in get(url)
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(warehouse)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert writer.stdout.readline() == "holding\n"
            time.sleep(snapshot.REFRESH_EVERY + 0.1)
            started = time.monotonic()
            html = get(url)
            # answered from the copy, at once (not after the 10 s lock wait), and it says why
            assert time.monotonic() - started < 5
            assert "quality.reviewer" in html and "agent.renamed" not in html
            assert "The warehouse is being written" in html and "is locked by another process" in html
            assert get(url + "sql?q=SELECT+count(*)+AS+n+FROM+runs&format=json").strip() == '[\n{"n":99}\n]'
            writer.stdin.write("done\n")
            writer.stdin.flush()
            assert writer.stdout.readline() == "closed\n"
        finally:
            writer.kill() if writer.poll() is None else None
            writer.wait(30)
        time.sleep(snapshot.REFRESH_EVERY + 0.1)
        html = get(url)
        assert "agent.renamed" in html and "quality.reviewer" not in html
        assert "being written" not in html


def test_the_server_does_not_keep_the_warehouse_from_a_writer(tmp_path):
    """Between requests the server holds no lock on the warehouse: a writer opens it at once."""
    warehouse = tmp_path / "w.duckdb"
    shutil.copyfile(EXAMPLE_WAREHOUSE, warehouse)
    with live_server(warehouse) as url:
        get(url)
        env = dict(os.environ, GROUNDWORK_LOCK_WAIT="0")
        r = subprocess.run([sys.executable, "-c", "import sys; from groundwork.core.warehouse import connect; "
                            "connect(sys.argv[1]).close(); print('opened')", str(warehouse)],
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0 and r.stdout == "opened\n", r.stderr


def test_the_readme_serve_line_and_its_json_url_work_on_the_example():
    """README.md#serve: its command (run from the checkout, with `--port 0` added so that a busy
    port 8080 cannot fail the test) and its `curl` URL (on the port it printed)."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Serve\n", 1)[1].split("\n## ", 1)[0]
    line = re.search(r"```sh\n(.*?)\n```", section, re.S).group(1)
    assert line == "groundwork serve --warehouse warehouse.duckdb.example"
    curl = re.search(r"`curl '(http://127\.0\.0\.1:8080/[^']+)'`", section).group(1)
    proc, printed = start(*shlex.split(line)[2:], "--port", "0", cwd=ROOT)
    try:
        base = re.search(r"(http://127\.0\.0\.1:\d+/)", printed).group(1)
        assert printed.endswith("(warehouse warehouse.duckdb.example, read-only; Ctrl-C stops)\n")
        assert get(curl.replace("http://127.0.0.1:8080/", base)) == '[\n{"n":99}\n]\n'
        assert "99 runs" in get(base)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_the_doctests_of_the_serve_package():
    import doctest

    from groundwork.serve import web
    assert doctest.testmod(web).failed == 0
