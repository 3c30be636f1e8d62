"""The pages' plumbing: the Jinja environment (the reports' HTML environment with this app's
templates first), the Content-Security-Policy and the other headers every response carries, the
stylesheet, links, times, and what every page's layout says about the data's freshness."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from jinja2 import ChoiceLoader, Environment, FileSystemLoader

from groundwork import __version__
from groundwork.reports.render import TEMPLATES_DIR as REPORT_TEMPLATES
from groundwork.reports.render import html_environment

TEMPLATES_DIR = Path(__file__).resolve().with_name("templates")

@lru_cache(maxsize=1)
def environment() -> Environment:
    """The reports' HTML environment (autoescape, ``visible``), with this app's templates first: its
    ``_layout.html`` replaces the nightly's, so run.html renders inside the app's pages."""
    base = html_environment(None)
    return base.overlay(loader=ChoiceLoader([FileSystemLoader(str(TEMPLATES_DIR)), base.loader]))


_STYLE_ATTR = re.compile(r'\bstyle="([^"{}]*)"')


@lru_cache(maxsize=1)
def style_attribute_hashes() -> tuple[str, ...]:
    """CSP hashes of the fixed style="..." attributes of the templates (run.html has one)."""
    found = set()
    for folder in (REPORT_TEMPLATES, TEMPLATES_DIR):
        for path in folder.glob("*.html"):
            found.update(_STYLE_ATTR.findall(path.read_text(encoding="utf-8")))
    return tuple(sorted("'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in found))


def content_security_policy() -> str:
    attrs = style_attribute_hashes()
    attr = f"; style-src-attr 'unsafe-hashes' {' '.join(attrs)}" if attrs else ""
    return ("default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
            f"frame-ancestors 'none'; base-uri 'none'{attr}")


@lru_cache(maxsize=1)
def stylesheet() -> bytes:
    """The nightly's stylesheet, then this app's additions: one file, served by the app."""
    return ((REPORT_TEMPLATES / "_style.css").read_bytes() + b"\n" + (TEMPLATES_DIR / "serve.css").read_bytes())


class SecurityHeaders:
    """Adds the Content-Security-Policy and its companions to every response (ASGI middleware)."""

    def __init__(self, app):
        self.app = app
        csp = content_security_policy()
        self.headers = [(b"content-security-policy", csp.encode()), (b"x-content-type-options", b"nosniff"),
                        (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
                        (b"cache-control", b"no-store")]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message = dict(message, headers=list(message.get("headers", [])) + self.headers)
            await send(message)

        await self.app(scope, receive, with_headers)


def run_url(invocation_id) -> str:
    return "/runs/" + quote(str(invocation_id), safe="") + "/"


def rule_url(code) -> str:
    return "/rules/" + quote(str(code), safe="")


def when(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        value = dt.datetime.fromtimestamp(value, dt.timezone.utc).replace(tzinfo=None)
    return value.strftime("%Y-%m-%d %H:%M:%S") + " UTC"


@dataclass
class Page:
    """What every page's layout shows: where the data comes from and how fresh it is."""

    warehouse: str
    copy_taken: str
    copy_age: float
    busy: str | None
    nightly: str | None
    ingest: str | None
    check: str | None
    version: str = __version__


def host_name(header: str) -> str:
    """The name in a Host header, without its port.

    >>> host_name("127.0.0.1:8080"), host_name("[::1]:8080"), host_name("Localhost")
    ('127.0.0.1', '[::1]', 'localhost')
    """
    header = header.strip().lower()
    if header.startswith("["):
        return header[:header.find("]") + 1] if "]" in header else header
    return header.split(":", 1)[0]


class AllowedHosts:
    """Answers only requests whose Host header names one of ``names`` (ASGI middleware); any other
    gets status 400. Against DNS rebinding: a page of another site re-pointed at 127.0.0.1."""

    def __init__(self, app, names):
        self.app = app
        self.names = {n.lower() for n in names}

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if host_name(host) not in self.names:
                body = b"this server answers only requests for " + ", ".join(sorted(self.names)).encode() + b"\n"
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

