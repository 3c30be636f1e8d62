"""Running the app: bind the socket first (so that --port 0 can say the port it got), print one
line with the address, then serve with uvicorn until SIGINT or SIGTERM."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import threading

import uvicorn

from groundwork.core.errors import GroundworkError
from groundwork.serve.app import create_app
from groundwork.serve.snapshot import Snapshots


class OneLine(logging.Filter):
    """uvicorn logs an exception it meets after the app has answered (a client breaking the HTTP
    protocol mid-request: a bad chunked body) with its traceback; the server's log gets one line
    instead (GROUNDWORK_DEBUG=1 keeps the traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and not os.environ.get("GROUNDWORK_DEBUG"):
            exc = record.exc_info[1]
            record.msg, record.args = f"{record.getMessage().strip()}: {type(exc).__name__}: {exc}".replace("\n", " "), None
            record.exc_info = record.exc_text = None
        return True


class Server(uvicorn.Server):
    """uvicorn's server, but a SIGINT or SIGTERM is a clean stop with exit status 0 (as for `groundwork
    watch`): uvicorn would raise the signal again once it has shut down, and the process would end
    with status 130 or 143."""

    @contextlib.contextmanager
    def capture_signals(self):
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); GroundworkError naming the address when it cannot."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise GroundworkError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"]


def allowed_hosts(sock: socket.socket) -> list[str] | None:
    """The Host names answered: loopback names when listening on a loopback address, else any."""
    host = sock.getsockname()[0]
    try:
        import ipaddress
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return LOOPBACK_NAMES if loopback else None


def serve(warehouse: str, host: str, port: int) -> None:
    snaps = Snapshots(warehouse)          # refuses a missing or foreign file before listening
    try:
        sock = bind(host, port)
        app = create_app(warehouse, snapshots=snaps, allowed_hosts=allowed_hosts(sock))
        print(f"groundwork serve: {address(sock)} (warehouse {warehouse}, read-only; Ctrl-C stops)", flush=True)
        config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False, lifespan="off")
        server = Server(config)   # its Config has set up uvicorn's loggers: now the filter
        logging.getLogger("uvicorn.error").addFilter(OneLine())
        server.run(sockets=[sock])
        sock.close()
    finally:
        snaps.close()
    sys.stdout.flush()
