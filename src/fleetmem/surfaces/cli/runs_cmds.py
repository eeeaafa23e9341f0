"""CLI commands for runs (ingest, open, heartbeat, touch, list, show) and presence."""

from __future__ import annotations

import argparse
import os
from typing import Any

from fleetmem.surfaces.cli.common import EXIT_OK, Handler, emit

TOKEN_ENV = "FLEETMEM_RUN_TOKEN"


def register(sub: Any) -> dict[str, Handler]:
    """Add ``runs`` and ``presence``; return handlers by command name."""
    runs = sub.add_parser("runs", help="run records and live runs")
    actions = runs.add_subparsers(dest="runs_command", required=True, metavar="ACTION")

    ingest = actions.add_parser("ingest", help="validate, store and close a run record")
    ingest.add_argument("file", help="path to a run record JSON file, or - for stdin")
    ingest.add_argument("--json", action="store_true")

    op = actions.add_parser("open", help="open a live run and print its token")
    op.add_argument("agent")
    where = op.add_mutually_exclusive_group(required=True)
    where.add_argument("--repo", help="repository key, e.g. github.com/acme/api")
    where.add_argument("--workdir", help="a directory in the checkout (git finds the repository)")
    op.add_argument("--branch")
    op.add_argument("--adapter", help="e.g. claude-code, codex")
    op.add_argument("--run-id", dest="run_id", help="the id its run record will carry")
    op.add_argument("--source", default="cli", choices=("cli", "hook", "supervisor", "api"))
    op.add_argument("--json", action="store_true")

    hb = actions.add_parser("heartbeat", help="tell fleetmem a run is still working")
    _token_arg(hb)
    hb.add_argument("--files", nargs="+", default=[], metavar="PATH", help="files edited")
    hb.add_argument("--branch")
    hb.add_argument("--json", action="store_true")

    touch = actions.add_parser("touch", help="record files a live run edited")
    _token_arg(touch)
    touch.add_argument("paths", nargs="+", metavar="PATH")
    touch.add_argument("--json", action="store_true")

    ls = actions.add_parser("list", help="live runs and stored runs, newest first")
    ls.add_argument("--repo")
    ls.add_argument("--agent")
    ls.add_argument("--limit", type=int, default=20)
    ls.add_argument("--json", action="store_true")

    show = actions.add_parser("show", help="one run: live state, record, sessions, edits")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true")

    # `runs import` lives with the agent integrations (agents_cmds).
    imp = actions.add_parser("import", help="import an agent's session logs as run records")
    imp.add_argument("source", choices=("codex",))
    imp.add_argument("path", help="a session log file, or a directory searched for *.jsonl")
    imp.add_argument("--agent", default="codex", help="the [agent.NAME] they ran as")
    imp.add_argument("--json", action="store_true")

    pr = sub.add_parser("presence", help="who is working where right now")
    pr.add_argument("--repo")
    pr.add_argument("--json", action="store_true")
    return {"runs": _cmd_runs, "presence": _cmd_presence}


def _token_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token", help=f"the run's token (default: ${TOKEN_ENV}; prefer it: argv is visible)"
    )


def _token(args: argparse.Namespace) -> str | None:
    return args.token or os.environ.get(TOKEN_ENV) or None


def _cmd_runs(app: Any, args: argparse.Namespace) -> int:
    action = args.runs_command
    if action == "ingest":
        from fleetmem.surfaces.cli.memory_cmds import _cmd_ingest

        return _cmd_ingest(app, args)
    if action == "import":
        from fleetmem.surfaces.cli.agents_cmds import import_runs

        return import_runs(app, args)
    handler = {
        "open": _open,
        "heartbeat": _heartbeat,
        "touch": _touch,
        "list": _list,
        "show": _show,
    }[action]
    return handler(app, args)


def _open(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.runs_views import opened_view

    workdir = os.path.abspath(args.workdir) if args.workdir else None
    opened = app.runs.open_run(
        args.agent,
        repo=args.repo,
        workdir=workdir,
        branch=args.branch,
        adapter=args.adapter,
        run_id=args.run_id,
        source=args.source,
    )
    emit(args, opened_view(opened), _opened_text)
    return EXIT_OK


def _opened_text(d: dict[str, Any]) -> str:
    where = d["repo"] or "no repository"
    if d["branch"]:
        where += f"@{d['branch']}"
    return f"run {d['run_id']} open ({d['agent']}, {where})\n{TOKEN_ENV}={d['token']}"


def _heartbeat(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.runs_views import live_view

    run = app.runs.heartbeat(_token(args), files=args.files, branch=args.branch)
    emit(args, live_view(run), _live_text)
    return EXIT_OK


def _touch(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.runs_views import live_view

    run = app.runs.touch(_token(args), args.paths)
    emit(args, live_view(run), _live_text)
    return EXIT_OK


def _live_text(d: dict[str, Any]) -> str:
    files = ", ".join(d["files"]) or "none"
    return f"run {d['run_id']} {d['state']}; files edited: {files}"


def _list(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.runs_views import summary_view

    rows = app.runs.list_runs(repo=args.repo, agent=args.agent, limit=args.limit)
    emit(args, [summary_view(r) for r in rows], _list_text)
    return EXIT_OK


def _list_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no runs"
    lines = []
    for r in rows:
        where = (r["repo"] or "-") + (f"@{r['branch']}" if r["branch"] else "")
        result = r["outcome"] or r["state"]
        lines.append(f"{r['run_id']}  {r['started_at']}  {r['agent']:<16} {result:<10} {where}")
    return "\n".join(lines)


def _show(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.runs_views import detail_view

    emit(args, detail_view(app.runs.show_run(args.run_id)), _show_text)
    return EXIT_OK


def _show_text(d: dict[str, Any]) -> str:
    lines = [f"run {d['run_id']}"]
    live = d["live"]
    if live is not None:
        lines.append(
            f"live     {live['state']} ({live['agent']}, {live['repo'] or 'no repository'}"
            f"{'@' + live['branch'] if live['branch'] else ''}), opened {live['opened_at']},"
            f" last seen {live['last_seen_at']}"
        )
        lines.append("files    " + (", ".join(live["files"]) or "none"))
    rec = d["record"]
    if rec is not None:
        lines.append(
            f"record   {rec['outcome']} ({rec['reason']}) {rec['agent']} via {rec['adapter']},"
            f" ended {rec['ended_at']}, {rec['duration_ms']} ms"
        )
        if rec["pull_request"]:
            lines.append(f"pr       {rec['pull_request']}")
        lines.append(f"episode  {rec['episode']}")
    for s in d["sessions"]:
        lines.append(f"session  {s['session_id']} {s['repo'] or '-'} edits: {len(s['edits'])}")
    return "\n".join(lines)


def _cmd_presence(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.runs_views import presence_view

    data = presence_view(app.runs.live_runs(args.repo))
    now = app.runs.now()
    emit(args, data, lambda d: _presence_text(d, now))
    return EXIT_OK


def _presence_text(d: dict[str, Any], now: float) -> str:
    runs = d["runs"]
    if not runs:
        return "no live runs"
    lines: list[str] = []
    current: tuple[str, str] | None = None
    for r in runs:
        key = (r["repo"] or "(no repository)", r["branch"] or "(no branch)")
        if key[0] != (current or ("", ""))[0]:
            lines.append(key[0])
        if key != current:
            lines.append(f"  {key[1]}")
            current = key
        seen = _ago(now, r["last_seen_at"])
        files = f", {len(r['files'])} files: {', '.join(r['files'][:5])}" if r["files"] else ""
        adapter = f" ({r['adapter']})" if r["adapter"] else ""
        lines.append(f"    {r['agent']}{adapter} {r['run_id']}, seen {seen}{files}")
    return "\n".join(lines)


def _ago(now: float, stamp: str) -> str:
    from datetime import datetime

    seconds = max(0.0, now - datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
    if seconds < 60:
        return f"{seconds:.0f}s ago"
    return f"{seconds // 60:.0f}m ago" if seconds < 3600 else f"{seconds // 3600:.0f}h ago"
