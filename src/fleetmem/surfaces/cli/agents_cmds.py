"""CLI commands that run and wire up real agents: ``run``, ``install``, ``uninstall``, ``hook``.

``fleetmem hook`` is normally dispatched by ``main`` before the parser is even built (it must
start fast and always exit 0); it is registered here too so that ``--help`` lists it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fleetmem.surfaces.cli.common import EXIT_INPUT, EXIT_OK, Handler, emit

INTEGRATIONS = ("claude-code", "codex")


def register(sub: Any) -> dict[str, Handler]:
    """Add ``run``, ``install``, ``uninstall`` and ``hook``; return handlers by name."""
    run = sub.add_parser(
        "run",
        help="run an agent once, briefed and recorded (see docs/agents.md)",
        description="Start [agent.AGENT] with its prompt, supervise it, and record the run.",
    )
    run.add_argument("agent")
    run.add_argument("--prompt", help="the prompt (default: the agent's configured prompt)")
    run.add_argument("--workdir", help="where the agent works (default: its workdir, or here)")
    run.add_argument("--json", action="store_true", help="print the outcome as JSON")

    for verb, text in (("install", "register"), ("uninstall", "remove")):
        p = sub.add_parser(verb, help=f"{text} fleetmem's hooks and MCP server in an agent")
        p.add_argument("integration", choices=INTEGRATIONS)
        p.add_argument(
            "--scope",
            choices=("user", "project"),
            default="user",
            help="claude-code: user settings (default) or this project's",
        )
        p.add_argument("--project", help="claude-code --scope project: the project directory")
        if verb == "install":
            p.add_argument("--agent", help="the [agent.NAME] the sessions run as")
        p.add_argument("--json", action="store_true")

    hook = sub.add_parser("hook", help="handle one agent hook (run by Claude Code or Codex)")
    hook.add_argument("integration", choices=("claude-code", "codex"))
    hook.add_argument("event")
    hook.add_argument("--agent")
    return {"run": _cmd_run, "install": _cmd_install, "uninstall": _cmd_uninstall,
            "hook": _cmd_hook}  # fmt: skip


# ---- run ------------------------------------------------------------------------------------
@contextmanager
def _cancel_on_signals() -> Iterator[threading.Event]:
    """SIGINT and SIGTERM stop the agent (``cancelled``) instead of killing fleetmem."""
    cancel = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return
    previous = {
        sig: signal.signal(sig, lambda *_: cancel.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield cancel
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _cmd_run(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.integrations.supervisor import Supervisor

    workdir = os.path.abspath(args.workdir) if args.workdir else None
    supervisor = Supervisor(app, environ=os.environ, out=None if args.json else sys.stdout)
    with _cancel_on_signals() as cancel:
        try:
            result = supervisor.run(args.agent, prompt=args.prompt, workdir=workdir, cancel=cancel)
        finally:
            # Bounded: a hung provider must not hold the exit past the close budget.
            supervisor.release_provider()
    if args.json:
        print(json.dumps({
            "run_id": result.run_id, "agent": result.agent, "outcome": result.outcome,
            "reason": result.reason, "exit_code": result.exit_code, "episode": result.episode,
            "result_text": result.result_text,
        }, indent=2, ensure_ascii=False))  # fmt: skip
    else:
        if result.result_text:
            print(result.result_text)
        print(
            f"fleetmem: run {result.run_id} of {result.agent}: {result.outcome}"
            f" ({result.reason}); episode {result.episode}",
            file=sys.stderr,
        )
    return int(result.exit_code)


# ---- install / uninstall ------------------------------------------------------------------
def fleetmem_executable() -> str:
    """The absolute path of this ``fleetmem`` command, for hooks and MCP entries to run."""
    here = Path(sys.argv[0])
    if here.name == "fleetmem" and here.exists():
        return str(here.resolve())
    found = shutil.which("fleetmem")
    if found:
        return str(Path(found).resolve())
    return str(Path(sys.executable).with_name("fleetmem"))


def _home_arg(app: Any) -> str | None:
    """The home to pin in hook commands: only when it is not the default one."""
    from fleetmem.config import default_home

    default = default_home({k: v for k, v in os.environ.items() if k != "FLEETMEM_HOME"})
    return None if Path(app.home) == default else str(app.home)


def _project(args: argparse.Namespace) -> Path | None:
    if args.scope != "project":
        return None
    if args.project:
        return Path(args.project).resolve()
    from fleetmem.service.gitrepo import resolve_repository

    found = resolve_repository(os.getcwd())
    return Path(found.root) if found is not None else Path.cwd()


def _changes_text(changes: list[dict[str, Any]]) -> str:
    if not changes:
        return "nothing to do"
    lines = []
    for c in changes:
        state = "removed" if c.get("removed") else "updated" if c["changed"] else "unchanged"
        backup = f" (backup: {c['backup']})" if c.get("backup") else ""
        lines.append(f"{state}  {c['path']}{backup}")
    return "\n".join(lines)


def _cmd_install(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.integrations import claude_code, codex

    exe = fleetmem_executable()
    if args.integration == "claude-code":
        changes = claude_code.install(
            scope=args.scope, project=_project(args), fleetmem=exe, home=_home_arg(app),
            agent=args.agent, environ=os.environ, state_dir=Path(app.home),
        )  # fmt: skip
        if args.scope == "project":
            _portable_notes(app)
    else:
        if args.scope != "user":
            print("fleetmem: --scope project applies to claude-code only", file=sys.stderr)
            return EXIT_INPUT
        changes = codex.install(
            fleetmem=exe, home=_home_arg(app), agent=args.agent, environ=os.environ
        )
        # Codex runs a new or changed hook only once the person has reviewed it.
        print(
            "fleetmem: note: Codex runs these hooks once you trust them: start `codex`, type"
            " /hooks and trust the four `fleetmem hook codex` entries",
            file=sys.stderr,
        )
    _keep_token_ranks(app)
    _keep_hook_code(args.integration)
    emit(args, [_as_dict(c) for c in changes], _changes_text)
    return EXIT_OK


def _keep_hook_code(integration: str) -> None:
    """Load what the installed hooks will load, so that the dataclass methods they define and
    the patterns they match are compiled here and kept by this command's exit
    (fleetmem.dataclass_cache, fleetmem.pattern_cache) before the first session: its first
    hooks then do not compile them themselves (about 90 ms, and 50 ms more for the first
    prompt that asks to remember something, once). Nothing is kept where Python may not
    write bytecode."""
    from fleetmem.core import (
        capture,  # noqa: F401 (UserPromptSubmit's rules)
        lazy_pattern,
    )
    from fleetmem.integrations.hookmain import hooks_class

    hooks_class(integration)  # imports the hooks' modules, defining their classes
    lazy_pattern.compile_all()  # kept by pattern_cache at this command's exit


def _keep_token_ranks(app: Any) -> None:
    """Write the token ranks the hooks count new lines from (fleetmem.token_ranks), so that
    the first session does not load the vocabulary to write them itself (about 1 s, once)."""
    from fleetmem import token_ranks
    from fleetmem.tokenize import get_tokenizer

    token_ranks.ensure(Path(app.home) / token_ranks.RANKS_FILE, lambda: get_tokenizer().encoding)


def _portable_notes(app: Any) -> None:
    """The project scope's entries run ``fleetmem`` from PATH with each person's own home:
    say so when that is not what this shell would run."""
    if shutil.which("fleetmem") is None:
        print(
            "fleetmem: note: the project's hooks run `fleetmem` from PATH, which has none here;"
            " install it with `pipx install fleetmem` or `uv tool install fleetmem`",
            file=sys.stderr,
        )
    if _home_arg(app) is not None:
        print(
            f"fleetmem: note: the project's files pin no home; sessions use $FLEETMEM_HOME or"
            f" ~/.fleetmem, not {app.home}, unless Claude Code runs with FLEETMEM_HOME set",
            file=sys.stderr,
        )


def _as_dict(change: Any) -> dict[str, Any]:
    return {
        "path": change.path,
        "changed": change.changed,
        "backup": change.backup,
        "removed": getattr(change, "removed", False),
    }


def _cmd_uninstall(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.integrations import claude_code, codex

    if args.integration == "claude-code":
        changes = claude_code.uninstall(
            scope=args.scope, project=_project(args), environ=os.environ,
            state_dir=Path(app.home),
        )  # fmt: skip
    else:
        changes = codex.uninstall(environ=os.environ)
    emit(args, [_as_dict(c) for c in changes], _changes_text)
    return EXIT_OK


# ---- hook -----------------------------------------------------------------------------------
def _cmd_hook(app: Any, args: argparse.Namespace) -> int:
    """Reached only when ``main`` did not dispatch the hook early; still fails open."""
    from fleetmem.integrations.hookmain import main as hook_main

    argv = [args.integration, args.event] + (["--agent", args.agent] if args.agent else [])
    return hook_main(argv, home=str(app.home))


# ---- runs import ------------------------------------------------------------------------
def import_runs(app: Any, args: argparse.Namespace) -> int:
    """``fleetmem runs import codex PATH``: one line per session log; exit 2 if any failed."""
    from fleetmem.integrations.codex_import import import_sessions

    results = import_sessions(app, Path(args.path), agent=args.agent)
    rows = [{"path": r.path, "run_id": r.run_id, "status": r.status} for r in results]

    def text(items: list[dict[str, Any]]) -> str:
        if not items:
            return "no session logs found"
        return "\n".join(f"{r['run_id'] or '-'}  {r['status']}  {r['path']}" for r in items)

    emit(args, rows, text)
    return EXIT_INPUT if any(r.status.startswith("error") for r in results) else EXIT_OK
