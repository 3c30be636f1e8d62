"""A minimal headless-Chromium driver over the DevTools protocol (stdlib only).

Chromium is started with ``--remote-debugging-pipe``: it reads protocol messages from fd 3 and
writes to fd 4, each message a JSON object terminated by NUL. No port, no websocket, no extra
dependency (Playwright would need its own Node driver and a matching browser build; Debian's
``chromium`` package is what CI installs).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM = os.environ.get("GROUNDWORK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]


def available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


class Browser:
    # Every wait is for an answer or an event, and ends when it comes; ``timeout`` only bounds a
    # Chromium that never answers. Its start alone (the first answer) takes seconds of CPU, more
    # on a 2-core machine shared with CPU-bound processes: hence a bound well above that.
    def __init__(self, timeout: float = 120.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="groundwork-chromium-")
        r_cmd, self._w = os.pipe()
        self._r, w_ev = os.pipe()

        def child_fds():
            a, b = os.dup(r_cmd), os.dup(w_ev)
            os.dup2(a, 100)
            os.dup2(b, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-pipe", "about:blank"],
            preexec_fn=child_fds, pass_fds=(3, 4), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(r_cmd)
        os.close(w_ev)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(domain, session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=True)

    # -- protocol -------------------------------------------------------------------------
    def _send(self, method: str, params: dict | None, session: bool) -> int:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        return self._id

    def _next(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._r], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        want = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._next(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        for i, ev in enumerate(self.events):
            if ev["method"] == method:
                return self.events.pop(i)
        while True:
            msg = self._next(deadline)
            if "method" in msg:
                if msg["method"] == method:
                    return msg
                self.events.append(msg)

    # -- helpers --------------------------------------------------------------------------
    def load(self, path: Path) -> None:
        """Open a local file and wait for its load event; earlier events are discarded."""
        self.events.clear()
        self.call("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=True)
        self.wait_event("Page.loadEventFired")
        self.evaluate("1")  # flush events queued during load

    def evaluate(self, expression: str):
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"evaluation failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (CSP violations, failed
        loads) seen since the last load."""
        out = []
        for ev in self.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + str(p.get("exceptionDetails", {}).get("text")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log ({p['entry'].get('source')}): {p['entry'].get('text')}")
        return out

    def dialogs(self) -> list[dict]:
        return [ev for ev in self.events if ev["method"] == "Page.javascriptDialogOpening"]

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params = {"format": "png"}
        if full_page:
            m = self.call("Page.getLayoutMetrics", session=True)
            size = m.get("cssContentSize") or m.get("contentSize")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 12000), "scale": 1})
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self._send("Browser.close", None, False)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait(timeout=10)
        finally:
            for fd in (self._r, self._w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
