"""The web app of `groundwork serve` (Starlette): the runs list, a run, a rule, and a query box,
read from a private copy of the warehouse (``snapshot``).

- No script on any page: filters, sorting and paging are plain links and GET forms, so the
  Content-Security-Policy allows no script at all, styles only from the app itself (and the
  hashes of the few fixed style attributes in the templates), and no request to anywhere else.
- No request changes anything: every route is a GET (HEAD) that reads the copy; the query box runs
  in `groundwork sql`'s sandbox (investigate.session) on a read-only copy, with a time and a row limit.
- Every string from the warehouse is printed through the reports' HTML environment (autoescape,
  and ``visible`` for control and bidirectional characters); the run page *is* the nightly's
  (reports.runpage.collect and reports/templates/run.html), with this app's layout.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import io
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import orjson
from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from groundwork import __version__
from groundwork.checks.rules import KINDS, load_rules, split_header
from groundwork.core.errors import GroundworkError
from groundwork.core.escape import visible
from groundwork.investigate import queries
from groundwork.investigate.formats import text as cell_text
from groundwork.investigate.formats import write_csv, write_json
from groundwork.investigate.session import ALLOW_FILES_FLAG, CONFINED, Result, SqlError
from groundwork.reports import data as report_data
from groundwork.reports import runpage
from groundwork.reports.charts import rate_chart
from groundwork.serve import data
from groundwork.serve.limits import BYTE_LIMIT, ROW_LIMIT, TIME_LIMIT, run_limited
from groundwork.serve.snapshot import Snapshots
from groundwork.serve.web import AllowedHosts, Page, SecurityHeaders, environment, rule_url, run_url, stylesheet, when

CELL_LIMIT = 2000   # characters of a /sql result cell shown in the HTML table


class RunIdConvertor(PathConvertor):
    """A run id in a URL: any characters, a newline too (Starlette's ``path`` is ``.*``, which
    stops at a newline, so such a run's link from the runs list answered 404)."""
    regex = r"[\s\S]*"


register_url_convertor("run_id", RunIdConvertor())


# ------------------------------------------------------------------------------------- the app


def create_app(warehouse: str | Path, *, snapshots: Snapshots | None = None, time_limit: float = TIME_LIMIT,
               row_limit: int = ROW_LIMIT, queries_dir: Path | None = None,
               allowed_hosts: list[str] | None = None) -> Starlette:
    """The app over ``warehouse`` (a copy of it is taken now: GroundworkError if it cannot be read).
    ``allowed_hosts``: the Host header values answered (None: any); the server bound to loopback
    answers only loopback names, so that a web page whose name was re-pointed at 127.0.0.1 (DNS
    rebinding) cannot read the warehouse through the visitor's browser."""
    snaps = snapshots or Snapshots(warehouse)
    env = environment()

    def page_info(con, fresh) -> Page:
        f = data.freshness(con)
        return Page(warehouse=str(warehouse), copy_taken=when(fresh.taken_at), copy_age=time.time() - fresh.taken_at,
                    busy=fresh.busy, nightly=when(f["nightly"]), ingest=when(f["ingest"]), check=when(f["check"]))

    def html(template: str, status: int = 200, **context) -> HTMLResponse:
        body = env.get_template(template).render(run_url=run_url, rule_url=rule_url, **context)
        return HTMLResponse(body, status_code=status)

    # -- / -----------------------------------------------------------------------------
    def runs_list(request: Request):
        q = request.query_params
        problems = []

        def date(name):
            raw = q.get(name, "").strip()
            if not raw:
                return None
            try:
                return dt.date.fromisoformat(raw)
            except ValueError:
                problems.append(f"{name}: expected a date (YYYY-MM-DD), got {raw!r}")
                return None

        filters = data.Filters(agent=q.get("agent", ""), mode=q.get("mode", ""), code=q.get("code", ""),
                               status=q.get("status", "") if q.get("status", "") in data.STATUSES else "",
                               new=q.get("new") == "1", since=date("since"), until=date("until"))
        sort = q.get("sort", "completed_at")
        descending = q.get("desc", "1" if sort == "completed_at" else "0") == "1"
        try:
            page = int(q.get("page", "1"))
        except ValueError:
            page = 1
        with snaps.cursor() as (con, fresh):
            nightly = data.latest_nightly(con)
            if nightly is None:
                filters.new = False
            result = data.runs_page(con, filters, sort, descending, page, nightly and nightly["nightly_id"])
            info = page_info(con, fresh)
        kept = {k: v for k, v in q.items() if v and k in ("agent", "mode", "code", "status", "new", "since", "until")}

        def link(**change):
            params = {**kept, "sort": sort, "desc": "1" if descending else "0", **change}
            params = {k: v for k, v in params.items() if v not in (None, "")}
            return "/?" + urlencode(params)

        def sort_link(column):
            return link(sort=column, desc="0" if column == sort and descending else "1", page=None)

        for row in result.rows:
            row["completed_at"] = when(row["completed_at"])
            row["code_list"] = [c for c in (row["codes"] or "").split(" ") if c]
        return html("runs.html", page=info, r=result, f=filters, q=kept, sort=sort, descending=descending,
                    columns=data.COLUMNS, labels=data.LABELS, link=link, sort_link=sort_link, nightly=nightly, problems=problems,
                    statuses=data.STATUSES)

    # -- /runs/<id>/ -------------------------------------------------------------------
    def run_page(request: Request):
        invocation_id = request.path_params["invocation_id"]
        with snaps.cursor() as (con, fresh):
            passes = data.run_passes(con, invocation_id)
            if passes is None:
                raise HTTPException(404, f"no run {invocation_id!r} in the warehouse")
            nightly = data.latest_nightly(con)
            lint_id, verify_id = passes
            data.build_run_state(con, invocation_id, lint_id, verify_id, nightly and nightly["nightly_id"])
            page = runpage.collect(con, report_data.Passes(lint_id=lint_id, verify_id=verify_id), [invocation_id])[invocation_id]
            info = page_info(con, fresh)
        tl = page.pop("_timeline")
        meta = {"tool_version": __version__, "generated_at": info.copy_taken}
        return html("run.html", d={"meta": meta, "run": page}, tl=tl, root="/", page=info)

    def run_text(request: Request):
        invocation_id = request.path_params["invocation_id"]
        name = request.url.path.rsplit("/", 1)[1]
        with snaps.cursor() as (con, _fresh):
            passes = data.run_passes(con, invocation_id)
            if passes is None:
                raise HTTPException(404, f"no run {invocation_id!r} in the warehouse")
            table, pass_id = ("lint_verdicts", passes[0]) if name == "grounding.txt" else ("verify_verdicts", passes[1])
            row = con.execute(f"SELECT summary FROM {table} WHERE lint_id = $p AND invocation_id = $id",
                              {"p": pass_id, "id": invocation_id}).fetchone()
        if row is None or row[0] is None:
            raise HTTPException(404, f"no {name} for run {invocation_id!r} (not judged, or not lintable/verifiable)")
        return PlainTextResponse(row[0] + "\n")

    # -- /rules, /rules/<code> ---------------------------------------------------------
    def rule_list(request: Request):
        rules = rules_by_code()
        with snaps.cursor() as (con, fresh):
            counts = dict(con.execute("SELECT code, count(DISTINCT invocation_id) FROM violation_messages GROUP BY code").fetchall())
            info = page_info(con, fresh)
        items = [{"code": c, "titles": sorted({r.title for r in rs}), "kinds": sorted({r.kind for r in rs}),
                  "failing": counts.get(c, 0)} for c, rs in sorted(rules.items())]
        return html("rules.html", page=info, rules=items)

    def rules_anchor(request: Request):
        # The run page is the nightly's own (reports/templates/run.html): its rule codes link to
        # rules.html#<code>, the report folder's rule codes page. Here that is /rules, whose rows
        # carry the same anchors (a browser keeps the #fragment across the redirect).
        return RedirectResponse("/rules", status_code=308)

    def rule_page(request: Request):
        code = request.path_params["code"]
        rules = rules_by_code().get(code)
        if not rules:
            raise HTTPException(404, f"no rule {code!r} (see /rules)")
        files = [describe(rule) for rule in rules]
        with snaps.cursor() as (con, fresh):
            failing = data.failing_runs(con, code)
            trend = data.rule_trend(con, code)
            info = page_info(con, fresh)
        for row in failing:
            row["completed_at"] = when(row["completed_at"])
        for point in trend:
            point["finished"] = when(point["finished_at"])
        chart = trend_chart(trend, code)
        return html("rule.html", page=info, code=code, files=files, failing=failing, trend=trend, chart=chart)

    # -- /sql --------------------------------------------------------------------------
    def sql_page(request: Request):
        # A page of another site may send the browser here (a link, an image, a form): its query
        # would run, unseen (its answer stays unreadable there). Browsers say where a request
        # comes from; a query typed here, or sent by a tool, is same-origin, "none" or unsaid.
        if request.headers.get("sec-fetch-site") == "cross-site":
            return PlainTextResponse("a query sent by another site's page is not run here\n", status_code=403)
        q = request.query_params
        fmt = q.get("format", "html")
        if fmt not in ("html", "json", "csv"):
            fmt = "html"
        saved_all = queries.load(queries_dir)
        saved = None
        sql = q.get("q", "")
        given: dict[str, str] = {}
        error = None
        table = None
        if q.get("saved"):
            saved = saved_all.get(q["saved"])
            if saved is None:
                error = f"no saved query {q['saved']!r}"
            else:
                given = {p.name: q[f"p.{p.name}"] for p in saved.params if q.get(f"p.{p.name}", "") != ""}
        with snaps.cursor() as (con, fresh):
            if error is None and (saved is not None or sql.strip()):
                try:
                    values = queries.bind(saved, given) if saved is not None else None
                    table = run_limited(con, saved.sql if saved is not None else sql, values,
                                        seconds=time_limit, max_rows=row_limit)
                except SqlError as exc:
                    # The app has no --allow-files: the hint of `groundwork sql` would name a flag it lacks.
                    msg = (f"{exc.text}: {CONFINED} (here always; `groundwork sql {ALLOW_FILES_FLAG}` lifts that)"
                           if exc.refused else str(exc))
                    error = f"{saved.path.name}: {msg}" if saved is not None else msg
                except GroundworkError as exc:
                    error = str(exc)
            info = page_info(con, fresh)
        if fmt != "html":
            return _data_response(fmt, table, error, row_limit)
        rows = None
        if table is not None:
            rows = [[None if v is None else _cut(cell_text(v)) for v in row] for row in table.rows]
        return html("sql.html", status=400 if error else 200, page=info, sql=sql, saved=saved,
                    saved_all=list(saved_all.values()), given=given, error=error, table=table, rows=rows,
                    time_limit=time_limit, row_limit=row_limit, byte_limit=BYTE_LIMIT)

    def style(request: Request):
        return Response(stylesheet(), media_type="text/css")

    async def not_found(request: Request, exc: HTTPException):
        if exc.status_code == 405:
            return PlainTextResponse("this app changes nothing: only GET and HEAD are answered\n", status_code=405,
                                     headers={"Allow": "GET, HEAD"})
        return html("error.html", status=exc.status_code, message=exc.detail, status_code=exc.status_code, page=None)

    def guarded(endpoint):
        """The endpoint, its unexpected failures one line on stderr and a 500 page (no traceback;
        GROUNDWORK_DEBUG=1 lets it through to the server's log)."""
        @functools.wraps(endpoint)
        def call(request: Request):
            try:
                return endpoint(request)
            except HTTPException:
                raise
            except Exception as exc:  # noqa: BLE001 - the last line of defence, as in groundwork.cli
                if os.environ.get("GROUNDWORK_DEBUG"):
                    raise
                message = f"internal error: {type(exc).__name__}: {exc}"
                print(visible(f"groundwork serve: {request.url.path}: {message}"), file=sys.stderr, flush=True)  # one line
                return html("error.html", status=500, message=message, status_code=500, page=None)
        return call

    routes = [Route(path, guarded(endpoint)) for path, endpoint in (
        ("/", runs_list),
        ("/runs/{invocation_id:run_id}/grounding.txt", run_text),
        ("/runs/{invocation_id:run_id}/sources.txt", run_text),
        ("/runs/{invocation_id:run_id}/", run_page),
        ("/rules", rule_list),
        ("/rules.html", rules_anchor),
        ("/rules/{code}", rule_page),
        ("/sql", sql_page),
        ("/static/style.css", style),
    )]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            if snapshots is None:
                snaps.close()

    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found}, lifespan=lifespan)
    if allowed_hosts is not None:
        app.add_middleware(AllowedHosts, names=allowed_hosts)
    app.add_middleware(SecurityHeaders)
    app.state.snapshots = snaps
    return app


def rules_by_code() -> dict[str, list]:
    """Every rule file (rules, findings, source checks) by code, in report order."""
    out: dict[str, list] = {}
    for rule in load_rules(kinds=KINDS):
        out.setdefault(rule.code, []).append(rule)
    return out


def describe(rule) -> dict:
    """A rule file for its page: title, kind, modes, the comment lines after its header (what it
    checks, in words) and its whole text. (Where the reports gain rule descriptions of their own,
    this is the one place to take them from.)"""
    text = rule.path.read_text(encoding="utf-8")
    header, _body = split_header(text)
    lead = []
    for line in text.splitlines()[len(header):]:
        if not line.startswith("--"):
            break
        lead.append(line[2:].strip())
    return {"name": rule.path.name, "title": rule.title, "kind": rule.kind, "modes": ", ".join(rule.modes),
            "description": " ".join(lead), "sql": text}


def trend_chart(points: list[dict], code: str) -> dict:
    """The rule page's trend chart (data.rule_trend's points): the share of judged runs failing
    ``code`` per check pass, with the counts on an axis of their own: the fleet report's rate chart
    (reports/charts.rate_chart, _rate_chart.html)."""
    return rate_chart([{"label": p["label"], "total": p["judged"], "failing": p["failing"]} for p in points],
                      [("failing", "fail", f"runs failing {code}")])


def _cut(s: str) -> str:
    return s if len(s) <= CELL_LIMIT else s[:CELL_LIMIT] + f"… [{len(s) - CELL_LIMIT} more characters]"


def _data_response(fmt: str, table, error: str | None, row_limit: int) -> Response:
    """/sql?format=json|csv: a JSON list of row objects, or CSV with a header line (the writers of
    `groundwork sql`); an error is status 400 with {"error": ...} or one text line. A cut result says
    so in the X-Groundwork-Truncated header."""
    if error is not None or table is None:
        message = error or "no query given (q=SQL or saved=NAME)"
        if fmt == "json":
            return Response(orjson.dumps({"error": message}), status_code=400, media_type="application/json")
        return PlainTextResponse(message + "\n", status_code=400)
    out = io.StringIO()
    result = Result(columns=table.columns, types=table.types, batches=iter([table.rows]))
    (write_json if fmt == "json" else write_csv)(result, out)
    headers = {"X-Groundwork-Rows": str(len(table.rows)), "X-Groundwork-Truncated": "true" if table.truncated else "false"}
    media = "application/json" if fmt == "json" else "text/csv; charset=utf-8"
    return Response(out.getvalue(), media_type=media, headers=headers)
