"""CLI commands for context files, the load meter and what an agent receives.

``fleetmem files list|show|edit|mode|history|restore|ask|activity|loads|proposals|apply|dismiss``,
``fleetmem report AGENT`` (the whole-agent context report) and ``fleetmem context AGENT``
(the exact context a run would receive now). Documented in docs/context-files.md.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import time
from pathlib import Path
from typing import Any

from fleetmem.errors import InvalidInput, StaleRevision
from fleetmem.surfaces.cli.common import EXIT_OK, Handler, emit


def _target(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--agent", help="an agent's file (identity, role, notes, ...)")
    where.add_argument("--project", metavar="REPO", help="a repository's notebook")


def register(sub: Any) -> dict[str, Handler]:
    """Add ``files``, ``report`` and ``context``; return their handlers."""
    files = sub.add_parser("files", help="context files, project notebooks and agent files")
    actions = files.add_subparsers(dest="files_command", required=True, metavar="ACTION")

    p = actions.add_parser("list", help="files with their load meters")
    _target(p)
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("show", help="a file, its load meter, and what is skipped")
    p.add_argument("name")
    _target(p)
    p.add_argument("--preview", action="store_true", help="mark the skipped region in place")
    p.add_argument("--revision", type=int, help="show a retained revision instead")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("edit", help="save a new revision from a file or stdin")
    p.add_argument("name")
    _target(p)
    p.add_argument("--from", dest="source", default="-", help="a file, or - for stdin")
    p.add_argument("--base", type=int, required=True, help="the revision your text is based on")
    p.add_argument("--user", help="who is saving (default: your login name)")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("mode", help="load a workspace file every run or on demand")
    p.add_argument("name")
    p.add_argument("mode", choices=["every-run", "on-demand"])
    p.add_argument("--user")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("history", help="retained revisions, newest first")
    p.add_argument("name")
    _target(p)
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("restore", help="make a retained revision current (a new revision)")
    p.add_argument("name")
    p.add_argument("revision", type=int)
    _target(p)
    p.add_argument("--user")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("ask", help="the message and attachment to ask an agent to update it")
    p.add_argument("name")
    _target(p)
    p.add_argument("--to", metavar="AGENT", help="address an agent (workspace files, notebooks)")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("activity", help="recent writes, mode changes and agent reads")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("loads", help="which revision of each file a run loaded")
    p.add_argument("run_id")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("proposals", help="Notes changes agents proposed, for you to apply")
    p.add_argument("--agent", help="one agent's proposals")
    p.add_argument(
        "--status", choices=["pending", "applied", "dismissed", "all"], default="pending"
    )
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("apply", help="apply a proposed Notes change (a new revision by you)")
    p.add_argument("proposal", help="the proposal number (see files proposals)")
    p.add_argument("--user", help="who is applying it (default: your login name)")
    p.add_argument("--json", action="store_true")

    p = actions.add_parser("dismiss", help="set a proposed Notes change aside, unapplied")
    p.add_argument("proposal")
    p.add_argument("--user")
    p.add_argument("--json", action="store_true")

    rp = sub.add_parser("report", help="everything an agent receives per run, with budgets")
    rp.add_argument("agent")
    rp.add_argument("--repo", help="the repository the run would work in (its notebook)")
    rp.add_argument("--json", action="store_true")

    cx = sub.add_parser("context", help="the exact context a run of AGENT would receive now")
    cx.add_argument("agent")
    cx.add_argument("--repo", help="the repository the run would work in (its notebook)")
    cx.add_argument("--json", action="store_true")
    return {"files": _cmd_files, "report": _cmd_report, "context": _cmd_context}


def _cmd_files(app: Any, args: argparse.Namespace) -> int:
    handler = {
        "list": _list,
        "show": _show,
        "edit": _edit,
        "mode": _mode,
        "history": _history,
        "restore": _restore,
        "ask": _ask,
        "activity": _activity,
        "loads": _loads,
        "proposals": _proposals,
        "apply": _apply,
        "dismiss": _dismiss,
    }[args.files_command]
    handler(app, args)
    return EXIT_OK


def _ref(app: Any, args: argparse.Namespace) -> Any:
    return app.files.ref(args.name, agent=args.agent, repo=args.project)


def _actor(args: argparse.Namespace) -> Any:
    from fleetmem.service.files import Actor

    return Actor("user", getattr(args, "user", None) or _login())


def _login() -> str:
    from fleetmem.core.labels import coerce

    try:
        return coerce("user", getpass.getuser()) or "operator"
    except (KeyError, OSError):
        return "operator"


# ---- text rendering --------------------------------------------------------------------------
def _meter_lines(d: dict[str, Any]) -> list[str]:
    meter = d["meter"]
    if meter["budget"] is None:
        return [f"Read on demand · {meter['tokens']:,} tokens · no load budget"]
    lines = [
        f"Reaches the agent: {meter['used']:,} / {meter['budget']:,} tokens ({meter['state']})"
    ]
    if meter["skipped"]:
        region = meter["skipped"]
        where = (
            f"line {region['line_start']}"
            if region["line_start"] == region["line_end"]
            else f"lines {region['line_start']}–{region['line_end']}"
        )
        lines.append(
            f"⚠ {meter['skipped_tokens']:,} tokens are skipped — the middle of this file never"
            f" reaches the agent ({region['chars']:,} characters, {where});"
            f" trim about {region['chars']:,} characters, or see it with --preview."
        )
    else:
        lines.append("All of it reaches the agent.")
    if meter["shared_with"]:
        lines.append("Shares 1,500 tokens with " + ", ".join(meter["shared_with"]) + ".")
    lines.append(d["authoring_rule"])
    return lines


def _header(d: dict[str, Any]) -> list[str]:
    title = d["title"] + (f" — {d['owner']}" if d["owner"] else "")
    mode = {"every_run": " · Loaded every run", "on_demand": " · Read on demand"}.get(
        d["mode"] or "", ""
    )
    saved = (
        f"revision {d['revision']}, saved {d['updated_at']} by {d['updated_by']}"
        if d["revision"]
        else "never written (revision 0)"
    )
    lines = [f"{title}{mode}", d["caption"], *_meter_lines(d), saved]
    if d["in_flight"]:
        runs = "run" if d["in_flight"] == 1 else "runs"
        lines.append(f"Takes effect on the next run · {d['in_flight']} {runs} in flight")
    return lines


def _list_text(items: list[dict[str, Any]]) -> str:
    rows = []
    for d in items:
        meter = d["meter"]
        budget = "on demand" if meter["budget"] is None else f"/ {meter['budget']:,}"
        mode = "⟳ " if d["mode"] == "every_run" else "  "
        rows.append(
            f"{mode}{d['name']:<16} rev {d['revision']:<4} {meter['used']:>6,} {budget:<10}"
            f" {meter['state']}"
        )
    return "\n".join(rows)


# ---- handlers --------------------------------------------------------------------------------
def _list(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import file_view

    if args.agent or args.project:
        views = app.files.list_files(agent=args.agent, repo=args.project)
        emit(args, [file_view(v, body=False) for v in views], _list_text)
        return
    listing = app.files.listing()
    data = {
        "workspace": [file_view(v, body=False) for v in listing.workspace],
        "agents": list(listing.agents),
        "notebooks": list(listing.notebooks),
    }
    emit(args, data, listing_text)


def listing_text(d: dict[str, Any]) -> str:
    out = ["Workspace context files (⟳ = loaded every run)", _list_text(d["workspace"])]
    out.append("Agents with files: " + (", ".join(d["agents"]) or "none"))
    out.append("Project notebooks: " + (", ".join(d["notebooks"]) or "none"))
    return "\n".join(out)


def _show(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import file_view, revision_view

    ref = _ref(app, args)
    if args.revision is not None:
        row = app.files.revision(ref, args.revision)
        emit(args, revision_view(row, body=True), revision_text)
        return
    data = file_view(app.files.get(ref))
    if args.preview:
        data["preview"] = app.files.preview(ref)
    emit(args, data, show_text)


def revision_text(d: dict[str, Any]) -> str:
    return str(d["body"])


def show_text(d: dict[str, Any]) -> str:
    body = str(d.get("preview", d["body"]))
    return "\n".join([*_header(d), "─" * 72]) + "\n" + body


def _read_source(source: str) -> tuple[str, Path | None]:
    if source == "-":
        raw = sys.stdin.buffer.read()
        path = None
    else:
        path = Path(source)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InvalidInput("from", source, exc.strerror or "cannot be read") from exc
    try:
        return raw.decode("utf-8"), path
    except UnicodeDecodeError as exc:
        raise InvalidInput("from", source, f"is not UTF-8 (byte {exc.start})") from exc


def _edit(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import file_view

    ref = _ref(app, args)
    text, path = _read_source(args.source)
    try:
        view = app.files.save(ref, text, base_revision=args.base, actor=_actor(args))
    except StaleRevision as exc:
        kept = path if path is not None else _keep(app.home, str(ref), exc.base_revision, text)
        print(stale_text(ref, exc.current_revision, exc.changed_by, kept), file=sys.stderr)
        raise
    emit(args, file_view(view, body=False), saved_text)


def saved_text(d: dict[str, Any]) -> str:
    """A file's header after a save, a mode change or a restore."""
    return "\n".join(_header(d))


def stale_text(ref: Any, current: int, changed_by: str, kept: Path) -> str:
    """Why a save was refused, and where the refused text is kept."""
    return (
        f"fleetmem: {ref.display} is at revision {current} (changed by"
        f" {changed_by}); your text is kept in {kept}. Compare with"
        f" `fleetmem files show {ref.name}`, then save again with --base {current}."
    )


def _keep(home: Path, ref: str, base: int, text: str) -> Path:
    """Keep refused text in the home so it is never lost (``kept/``)."""
    folder = home / "kept"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    path = folder / f"{ref.replace('/', '_')}-base{base}-{stamp}.md"
    path.write_text(text, encoding="utf-8")
    return path


def _mode(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import file_view

    view = app.files.set_mode(args.name, args.mode, actor=_actor(args))
    emit(args, file_view(view, body=False), saved_text)


def _history(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import revision_view

    emit(args, [revision_view(r) for r in app.files.history(_ref(app, args))], history_text)


def history_text(items: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{d['revision']:>4}  {d['created_at']}  {d['author']:<28} {d['action']}"
        + (f" of {d['restored_from']}" if d["restored_from"] is not None else "")
        + f"  {d['bytes']:,} bytes"
        for d in items
    )


def _restore(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import file_view

    view = app.files.restore(_ref(app, args), args.revision, actor=_actor(args))
    emit(args, file_view(view, body=False), saved_text)


def _ask(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import ask_view

    emit(args, ask_view(app.files.ask(_ref(app, args), to_agent=args.to)), ask_text)


def ask_text(d: dict[str, Any]) -> str:
    a = d["attachment"]
    return "\n".join(
        [f"Message: {d['message']}", f"📎 {a['title']}", a["intro"], "─" * 72, a["text"]]
    )


def _activity(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import activity_view

    emit(args, [activity_view(r) for r in app.files.activity(limit=args.limit)], activity_text)


def activity_text(items: list[dict[str, Any]]) -> str:
    return (
        "\n".join(
            f"{d['at']}  {d['actor']:<28} {d['action']:<9} {d['ref']}"
            + (f" @{d['revision']}" if d["revision"] is not None else "")
            for d in items
        )
        or "no activity"
    )


def _loads(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import load_view

    emit(args, [load_view(r) for r in app.files.run_loads(args.run_id)], loads_text)


def loads_text(items: list[dict[str, Any]]) -> str:
    return (
        "\n".join(
            f"{d['segment']:<18} {d['ref'] or '-':<48} rev {d['revision']}"
            f"  {d['used']:,}/{d['budget']:,}"
            for d in items
        )
        or "no loads recorded for that run"
    )


def _proposals(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.proposal_views import proposal_view, proposals_text

    status = None if args.status == "all" else args.status
    rows = app.files.list_proposals(agent=args.agent, status=status, limit=args.limit)
    emit(args, [proposal_view(r) for r in rows], proposals_text)


def _apply(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.files_views import file_view

    proposal = app.files.get_proposal(args.proposal)
    try:
        view = app.files.apply_proposal(proposal.id, actor=_actor(args))
    except StaleRevision as exc:
        print(
            f"fleetmem: proposal {proposal.id} was made on revision {exc.base_revision} of"
            f" {proposal.agent}'s Notes, which is now at revision {exc.current_revision}"
            f" (changed by {exc.changed_by}); nothing was written. Ask the agent again, or"
            " copy what you need from `fleetmem files proposals`.",
            file=sys.stderr,
        )
        raise
    emit(args, file_view(view, body=False), saved_text)


def _dismiss(app: Any, args: argparse.Namespace) -> None:
    from fleetmem.surfaces.proposal_views import proposal_line, proposal_view

    row = app.files.dismiss_proposal(args.proposal, actor=_actor(args))
    emit(args, proposal_view(row), proposal_line)


def _bar(used: int, budget: int, width: int = 16) -> str:
    filled = min(width, round(width * used / budget)) if budget else 0
    return "█" * filled + "░" * (width - filled)


def _cmd_report(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.agent_views import agent_view
    from fleetmem.surfaces.files_views import report_view

    view = agent_view(app, args.agent)  # the agent's own workspace
    emit(args, report_view(view.files.report(args.agent, repo=args.repo)), report_text)
    return EXIT_OK


def report_text(d: dict[str, Any]) -> str:
    lines = [
        f"{d['agent']} — what it receives every run"
        f"{' in ' + d['repo'] if d['repo'] else ''}  {d['total']:,} / {d['backstop']:,}"
    ]
    for s in d["segments"]:
        note = ""
        if s["status"] != "ok":
            note = f"  {s['status']}"
        elif s["skipped_tokens"]:
            note = f"  ⚠ {s['skipped_tokens']:,} skipped"
        labels = [p["label"] for p in s["parts"] if p["label"] and p["tokens"]]
        if labels:
            note += "  " + ", ".join(labels)
        lines.append(
            f"  {s['title'].split(' — ')[0]:<20} {_bar(s['used'], s['budget'])}"
            f" {s['used']:>6,} / {s['budget']:>6,}  {s['state']}{note}"
        )
    if d["message"]:
        lines.append(d["message"])
    lines.append(f"Framing (headings, fences): {d['overhead']:,} tokens.")
    lines.extend(hosts_text(d.get("hosts", [])))
    agreed = d["last_run"]["agreed"]
    if agreed is not None:
        mark = "✓" if agreed else "✗ (the meter and the last run differ)"
        lines.append(f"Measured from the current content — no run needed. Last run agreed: {mark}")
    else:
        lines.append("Measured from the current content — no run needed.")
    return "\n".join(lines)


def hosts_text(hosts: list[dict[str, Any]]) -> list[str]:
    """Per host: what it is given at the start and what the agent must pull (to the token)."""
    if not hosts:
        return []
    lines = ["What reaches the agent at the start, per host:"]
    for h in hosts:
        given = f"{h['delivered_tokens']:,} tokens"
        if h["size"] is not None:
            unit = "characters" if h["unit"] == "utf16" else "bytes"
            given += f" ({h['size']:,} of {h['limit']:,} {unit})"
        if h["whole"]:
            pulled = "all of it"
        else:
            parts = ", ".join(
                p["title"].split(" — ")[0] + ("" if p["whole"] else " (the rest)")
                for p in h["withheld"]
            )
            pulled = f"{h['withheld_tokens']:,} tokens to pull: {parts}"
        shared = (
            "; shared with the briefing when memory_briefing is on"
            if h["shares_with_briefing"]
            else ""
        )
        lines.append(f"  {h['title']:<28} {given}, {pulled}{shared}")
    return lines


def _cmd_context(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.surfaces.files_views import context_view

    context = app.files.assemble(args.agent, repo=args.repo)
    if args.json:
        emit(args, context_view(context), lambda d: d["text"])
    else:
        sys.stdout.write(context.text)
    return EXIT_OK
