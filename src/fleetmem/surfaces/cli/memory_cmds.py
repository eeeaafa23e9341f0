"""CLI commands for runs, episodes, recall, forgetting, status and the daemon."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fleetmem.errors import InvalidInput
from fleetmem.surfaces.cli.common import EXIT_OK, Handler, emit


def register(sub: Any) -> dict[str, Handler]:
    """Add this module's commands to ``sub``; return handlers by command name."""
    s = sub.add_parser("serve", help="run the daemon (HTTP API and background jobs)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8737)

    # `runs` (ingest, open, heartbeat, list, ...) is registered by runs_cmds, which calls
    # _cmd_ingest below for `runs ingest`.

    eps = sub.add_parser("episodes", help="list episodes, or `episodes show ID`")
    eps.add_argument("action", nargs="*", metavar="show ID", help="show one episode")
    eps.add_argument("--agent")
    eps.add_argument("--repo")
    eps.add_argument("--since", help="a duration back from now (7d) or a date")
    eps.add_argument("--limit", type=int, default=50)
    eps.add_argument("--json", action="store_true")

    rc = sub.add_parser("recall", help="recall episodes by meaning and by words")
    rc.add_argument("query")
    who = rc.add_mutually_exclusive_group(required=True)
    who.add_argument("--repo", help="recall in project:REPO")
    who.add_argument("--as", dest="as_agent", metavar="AGENT", help="recall as AGENT would")
    who.add_argument(
        "--all-repos", action="store_true", help="recall in every repository with an episode"
    )
    rc.add_argument("--paths", nargs="+", default=[], metavar="PATH")
    rc.add_argument("--limit", type=int, default=8)
    rc.add_argument("--json", action="store_true")

    fg = sub.add_parser(
        "forget", help="forget an episode everywhere it was recorded, or (--run) a whole run"
    )
    fg.add_argument("episode_id", nargs="?")
    fg.add_argument(
        "--run", metavar="RUN", help="take the run out of the run graph, its episodes forgotten"
    )
    fg.add_argument("--json", action="store_true")

    st = sub.add_parser("status", help="provider, counts, pending and failed work")
    st.add_argument("--json", action="store_true")

    jb = sub.add_parser(
        "jobs", help="run due background work once (retries, retention, facts purge, index upkeep)"
    )
    jb.add_argument("--json", action="store_true")

    vc = sub.add_parser(
        "vectors",
        help="re-embedding progress of episodes and facts under the active embedder",
    )
    vc.add_argument(
        "--run", action="store_true", help="embed every missing vector now, in the foreground"
    )
    vc.add_argument("--json", action="store_true")
    return {
        "serve": _cmd_serve,
        "episodes": _cmd_episodes,
        "recall": _cmd_recall,
        "forget": _cmd_forget,
        "status": _cmd_status,
        "jobs": _cmd_jobs,
        "vectors": _cmd_vectors,
    }


def _read_record(path: str) -> bytes:
    """The record's bytes, read one byte past the bound so the parser can name the limit;
    one leading UTF-8 BOM (a Windows editor's) is dropped, as for every file the CLI reads."""
    from fleetmem.service.runrecords import MAX_RECORD_BYTES

    bom = b"\xef\xbb\xbf"
    # A file past the bound stays past it once its BOM is dropped, so the size is what the
    # parser names, not a cut-off document.
    limit = MAX_RECORD_BYTES + 1 + len(bom)
    if path == "-":
        raw = sys.stdin.buffer.read(limit)
    else:
        try:
            with Path(path).open("rb") as handle:
                raw = handle.read(limit)
        except OSError as exc:
            raise InvalidInput("file", path, exc.strerror or "cannot be read") from exc
    return raw.removeprefix(bom)


def _cmd_ingest(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces import views

    result = app.memory.ingest_run(_read_record(args.file))
    emit(args, views.ingest_view(result), ingest_text)
    return EXIT_OK


def ingest_text(d: dict[str, Any]) -> str:
    return f"run {d['run_id']}: {d['status']}" + (
        f" (episode {d['episode_id']})" if d["episode_id"] else ""
    )


def _episode_line(d: dict[str, Any]) -> str:
    flag = " [forgotten]" if d["forgotten_at"] else ""
    branch = f"@{d['branch']}" if d["branch"] else ""
    return (
        f"{d['episode_id']}  {d['started_at']}  {d['agent']:<16} {d['outcome']:<10}"
        f" {d['repo']}{branch}{flag}"
    )


def _cmd_episodes(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces import views
    from fleetmem.surfaces.cli.parsing import parse_since

    if args.action:
        if len(args.action) != 2 or args.action[0] != "show":
            raise InvalidInput("episodes", " ".join(args.action), "use `episodes show ID`")
        episode_id = args.action[1]
        row = views.readable_episode(app.memory.get_episode(episode_id))
        detail = views.episode_detail(row, app.memory.episode_index(episode_id))
        emit(args, detail, _show_text)
        return EXIT_OK
    since = parse_since(args.since, app.memory.now()) if args.since else None
    rows = app.memory.list_episodes(agent=args.agent, repo=args.repo, since=since, limit=args.limit)
    emit(args, [views.episode_brief(r) for r in rows], episodes_text)
    return EXIT_OK


def episodes_text(ds: list[dict[str, Any]]) -> str:
    return "\n".join(map(_episode_line, ds)) or "no episodes"


def _show_text(d: dict[str, Any]) -> str:
    lines = [_episode_line(d), ""]
    lines.append(d["text"].rstrip("\n") if d["text"] else "(body deleted: episode forgotten)")
    lines.append("")
    for r in d["index"]:
        lines.append(f"index: {r['provider']} {r['provider_id']} {r['state']}")
    return "\n".join(lines)


def _cmd_recall(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces import views
    from fleetmem.surfaces.agent_views import recall_sections_view

    found = app.agent_memory.operator_recall(
        args.query,
        repo=args.repo,
        agent=args.as_agent,
        every_repo=bool(getattr(args, "all_repos", False)),
        paths=args.paths,
        limit=args.limit,
    )
    data = views.recall_view(found.episodes)
    # Facts and the runs that edited --paths, beside the episodes (as an agent's recall).
    data.update(recall_sections_view(found))
    emit(args, data, recall_text)
    return EXIT_OK


def recall_text(d: dict[str, Any]) -> str:
    from fleetmem.surfaces.agent_views import recall_sections_text

    head = f"provider {d['provider']}"
    if d["degraded"]:
        head += f" (degraded: {d['degraded']})"
    if d["dropped"]:
        head += " dropped " + ", ".join(f"{k}={v}" for k, v in sorted(d["dropped"].items()))
    lines = [*recall_sections_text(d, "facts"), "", "episodes", head]
    if not d["items"]:
        # An empty answer is also what a question about nothing the store holds gets.
        lines.append("nothing relevant")
    for item in d["items"]:
        lines.append("")
        lines.append(
            f"{item['episode_id']}  {item['agent']}  {item['outcome']}  {item['started_at']}"
            f"  score {item['score']:.4f}"
            if item["score"] is not None
            else f"{item['episode_id']}  {item['agent']}  {item['outcome']}"
        )
        lines.extend("  " + line for line in item["text"].splitlines())
    lines += ["", *recall_sections_text(d, "recent_runs")]
    return "\n".join(lines)


def _cmd_forget(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces import views

    if (args.run is None) == (args.episode_id is None):
        raise InvalidInput("episode_id", args.episode_id, "give an episode id or --run RUN")
    if args.run is not None:
        done = app.memory.forget_run(args.run)
        view = {
            "run_id": done.run_id,
            "episodes": [views.forget_view(e) for e in done.episodes],
        }
        emit(args, view, forget_run_text)
        return EXIT_OK
    emit(args, views.forget_view(app.memory.forget(args.episode_id)), forget_text)
    return EXIT_OK


def forget_run_text(d: dict[str, Any]) -> str:
    lines = [f"removed run {d['run_id']} from the run graph"]
    lines += ["  " + forget_text(e) for e in d["episodes"]]
    return "\n".join(lines)


def forget_text(d: dict[str, Any]) -> str:
    return (
        f"forgot {d['episode_id']}"
        + (" (already forgotten)" if d["already_forgotten"] else "")
        + f": {d['provider_ids_forgotten']} provider ids forgotten,"
        f" {d['provider_ids_pending']} pending"
    )


def _status_text(d: dict[str, Any]) -> str:
    e, p, f, u = d["episodes"], d["pending"], d["failed"], d["utility"]
    refused = u["refused_today"]
    return "\n".join(
        [
            f"provider        {d['provider']['name']} ({d['provider']['state']},"
            f" contract {d['provider']['contract']})",
            f"embedding model {d['embedding_model'] or 'off (text search only)'}",
            *_embedder_lines(d),
            f"summaries       {'on' if d['summaries'] else 'off'}",
            f"utility calls   {u['calls_today']} today of {u['daily_ceiling']}"
            f" ({u['rate_per_minute']}/min); refused {refused['rate_limited']} by the rate,"
            f" {refused['daily_ceiling']} by the ceiling",
            f"episodes        {e['live']} live, {e['forgotten']} forgotten",
            "runs            "
            + (", ".join(f"{k}: {v}" for k, v in sorted(_run_groups(d["runs"]).items())) or "none"),
            f"pending         {p['record']} records, {p['forget']} forgets",
            f"failed          {f['record']} records, {f['forget']} forgets",
            f"vectors missing {d['vectors_missing']}",
            f"index segments  {d['index_segments']}"
            f" ({d['index_outside_largest']:.0%} outside the largest)",
        ]
    )


def _embedder_lines(d: dict[str, Any]) -> list[str]:
    # An older daemon's status has neither block; print nothing rather than guess.
    lines = []
    if d.get("embedder"):
        lines.append(f"search          {d['embedder']['summary']}")
    reembed = d.get("reembed")
    if reembed and not reembed.get("complete", True):
        lines.append(f"re-embedding    {_reembed_line(reembed)}")
    return lines


def _cmd_vectors(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.service.reembed import ReembedSteps, run_reembed

    embedded = None
    if args.run:
        steps = ReembedSteps(app.memory, app.facts)
        embedded = {"episodes": 0, "facts": 0}
        while True:
            # One budgeted round at a time, so progress shows on a long switch.
            done = run_reembed(steps, budget_s=2.0)
            embedded = {k: embedded[k] + done[k] for k in embedded}
            if not (done["episodes"] or done["facts"]):
                break
            if not args.json:
                progress = app.memory.reembed_progress()
                print(f"re-embedding    {_reembed_line(progress)}", file=sys.stderr)
    status = app.memory.status()
    data = {"embedder": status["embedder"], "reembed": status["reembed"], "embedded": embedded}
    emit(args, data, _vectors_text)
    return EXIT_OK


def _reembed_line(progress: dict[str, Any]) -> str:
    # Imported here, not at the top: the service layer would cost every CLI start
    # (--version and completion included) most of a second.
    from fleetmem.service.reembed import reembed_line

    return reembed_line(progress)


def _vectors_text(d: dict[str, Any]) -> str:
    lines = [f"search          {d['embedder']['summary']}"]
    lines.append(f"vectors         {_reembed_line(d['reembed'])}")
    if d["embedded"] is not None:
        e = d["embedded"]
        lines.append(f"embedded now    {e['episodes']} episodes, {e['facts']} facts")
    return "\n".join(lines)


def _run_groups(runs: dict[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for status, n in runs.items():
        key = "with episode" if status.startswith("ep_") else status
        out[key] = out.get(key, 0) + n
    return out


def _cmd_status(app: Any, args: argparse.Namespace) -> int:
    emit(args, app.memory.status(), _status_text)
    return EXIT_OK


def _cmd_jobs(app: Any, args: argparse.Namespace) -> int:
    # The same work as one hourly pass of the daemon's BackgroundJobs, so a machine that runs
    # `fleetmem jobs` from cron instead of a daemon still purges facts past their 30 days and
    # keeps the text index in few segments.
    # Under the daemons' lease: never at the same moment as a daemon's own pass.
    from fleetmem.service.jobs import hourly_pass_once

    done = app.memory.process_jobs()
    hourly = hourly_pass_once(app.memory, app.facts)
    fixed = app.memory.backfill_vectors()
    data = {
        "processed": done,
        "retention_forgotten": 0 if hourly is None else hourly.retention_forgotten,
        "facts_purged": 0 if hourly is None else hourly.facts_purged,
        # None: a daemon was running its hourly pass at that moment (it does the same work).
        "index_compacted": None if hourly is None else hourly.index_compacted,
        "vectors_backfilled": fixed,
    }
    emit(args, data, lambda d: json.dumps(d))
    return EXIT_OK


def _cmd_serve(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.http.server import serve

    serve(app, args.host, args.port)
    return EXIT_OK
