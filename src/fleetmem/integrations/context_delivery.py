"""How a real run receives its assembled context (docs/context-files.md, "What reaches a run").

The context (:meth:`fleetmem.service.files.ContextFileService.assemble` with the run's id, which
records the revision of every file it loaded and logs each truncation) is assembled once per
run and handed over by the documented mechanism of each agent:

- ``claude-code``: ``claude -p --append-system-prompt TEXT`` (the flag appends to Claude Code's
  own system prompt; it works in print mode);
- ``codex``: ``codex exec -c developer_instructions=TEXT`` (``developer_instructions`` is the
  Codex configuration key for extra developer instructions; ``-c`` takes a TOML value, so the
  text goes as a TOML basic string);
- ``command``: ``$FLEETMEM_CONTEXT_FILE`` names a file (mode 0600, in a private directory
  removed when the run ends) holding the text;
- a Claude Code session (SessionStart hook): ``additionalContext`` of the hook's answer.

Each mechanism has the limits of its host (:mod:`fleetmem.core.hosts`): the context is fitted to
them by leaving whole parts out, and those parts, with the rest of the context, are kept for
the run (0600, until it ends) and served by the MCP resource ``fleetmem://memory/context``;
the last lines of what the host is given name them and the resource.

A respawned process gets the argv and environment of the first start, so the same text (S20);
a resumed Claude Code session gets the text its run was first given, kept beside the hook's
own state (0600) until the session ends. An empty context adds nothing. The text is never
logged: only its size and the run id are. A failure to assemble never stops a run: the run
starts without context and the failure is logged and counted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from fleetmem import metrics
from fleetmem.core.hosts import (
    CLAUDE_CODE_RUN,
    CLAUDE_CODE_SESSION,
    CODEX_RUN,
    HostFit,
    HostProfile,
    toml_string,
    within,
)
from fleetmem.errors import UnknownAgentWorkspace
from fleetmem.integrations.briefing import fits, per_argument_limit
from fleetmem.service.bootstrap import App

log = logging.getLogger("fleetmem.context")

CONTEXT_FILE_ENV = "FLEETMEM_CONTEXT_FILE"
CONTEXT_FILE_NAME = "fleetmem-context.md"
#: Where a Claude Code session's context is kept between its hooks (beside the hook state).
SESSION_DIR = ("hooks", "claude-code")
#: Where a run's whole context is kept while some of it waits to be pulled.
KEPT_DIR = ("run", "context")
#: A kept context older than this belongs to a run that ended without saying so (a session
#: killed before SessionEnd): it is removed the next time a context is kept.
KEPT_MAX_AGE_S = 7 * 24 * 3600
#: How long past its answer deadline a SessionStart hook may still wait for the context.
SESSION_GRACE_S = 1.0
#: The least room a SessionStart answer keeps for the context beside the fenced briefing;
#: with less, the briefing is replaced by a line telling the agent to call ``briefing``.
SESSION_CONTEXT_ROOM = 5_000
BRIEFING_POINTER = (
    "Your fleetmem briefing did not fit here: call the fleetmem tool `briefing` to read it."
)


@dataclass
class Delivery:
    """The argv and environment a run's process is started with, and what to clean up."""

    argv: list[str]
    env: dict[str, str]
    via: str | None = None  # how the context went: "argv", "file", or None (nothing to give)
    directory: str | None = field(default=None, repr=False)

    def close(self) -> None:
        """Remove the run's private context directory (if any); safe to call twice."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def assemble_for_run(
    app: App,
    *,
    agent: str,
    repo: str | None,
    run_id: str,
    about: str | None = None,
    host: HostFit | None = None,
) -> str:
    """The run's context text, from its agent's workspace and its loads recorded there;
    ``""`` when it could not be assembled. ``about`` (the run's prompt) picks the facts
    relevant to it; ``host`` fits it to what that host takes (the whole context is then kept
    for the pull)."""
    try:
        files = app.for_agent(agent).files
        context = files.assemble(agent, repo=repo, run_id=run_id, about=about, host=host)
    except UnknownAgentWorkspace as exc:  # said whole: the operator must fix the key
        log.warning("context.failed agent=%s run=%s error=%s", agent, run_id, exc)
        metrics.CONTEXT_DELIVERIES.labels(how="none", outcome="failed").inc()
        return ""
    except Exception as exc:  # context is an aid: its failure never stops a run
        log.warning("context.failed agent=%s run=%s error=%s", agent, run_id, type(exc).__name__)
        metrics.CONTEXT_DELIVERIES.labels(how="none", outcome="failed").inc()
        return ""
    assembly = context.assembly
    if assembly.pulled:
        keep_whole(app.home, run_id, assembly.full_text)
        log.info(
            "context.pulled agent=%s run=%s host=%s parts=%s tokens=%d",
            agent,
            run_id,
            host.profile.key if host else "-",
            ",".join(s.key for s in assembly.pulled),
            sum(s.withheld_tokens for s in assembly.pulled),
        )
    return assembly.text


# ---- the whole context, kept for the parts a host could not take ---------------------------
def _run_key(run_id: str) -> str:
    """A run's file name stem: its id may hold characters no file name should."""
    return hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:32]


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` for this user only (0600, in a 0700 directory)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _kept_file(home: Path, run_id: str) -> Path:
    return home.joinpath(*KEPT_DIR) / f"{_run_key(run_id)}.md"


def keep_whole(home: Path, run_id: str, text: str) -> None:
    """Keep ``text`` (a run's whole context) for :func:`kept_whole`; a failure is logged and
    the pull then answers that nothing is kept."""
    path = _kept_file(home, run_id)
    try:
        _write_private(path, text)
    except OSError as exc:
        log.warning("context.keep_failed run=%s error=%s", run_id, type(exc).__name__)
        return
    _prune_kept(path.parent, time.time() - KEPT_MAX_AGE_S)


def _prune_kept(directory: Path, before: float) -> None:
    with contextlib.suppress(OSError):
        for kept in directory.glob("*.md"):
            with contextlib.suppress(OSError):
                if kept.stat().st_mtime < before:
                    kept.unlink()
                    log.info("context.kept_pruned file=%s", kept.name)


def kept_whole(home: Path, run_id: str) -> str | None:
    """The whole context of a run some of whose parts its host could not take; None when
    nothing of it was left out (or the run has ended)."""
    try:
        return _kept_file(home, run_id).read_text(encoding="utf-8")
    except OSError:
        return None


def forget_whole(home: Path, run_id: str) -> None:
    with contextlib.suppress(OSError):
        _kept_file(home, run_id).unlink()


def context_options(adapter: str, text: str) -> list[str] | None:
    """The documented options that give ``text`` to an agent CLI; None when it has none."""
    if adapter == "claude-code":
        return ["--append-system-prompt", text]
    if adapter == "codex":
        return ["-c", "developer_instructions=" + toml_string(text)]
    return None


def with_options(argv: Sequence[str], options: Sequence[str], *, has_prompt: bool) -> list[str]:
    """``argv`` with ``options`` before the ``-- PROMPT`` that ends it (or at its end)."""
    cut = len(argv) - 2 if has_prompt and len(argv) >= 2 and argv[-2] == "--" else len(argv)
    return [*argv[:cut], *options, *argv[cut:]]


def deliver(
    adapter: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    text: str,
    *,
    has_prompt: bool,
    agent: str,
    run_id: str,
) -> Delivery:
    """The argv and environment that carry ``text`` to a ``fleetmem run`` process."""
    base = Delivery(list(argv), dict(env))
    if not text:
        metrics.CONTEXT_DELIVERIES.labels(how="none", outcome="empty").inc()
        return base
    options = context_options(adapter, text)
    if options is not None:
        given = with_options(argv, options, has_prompt=has_prompt)
        if not fits(given, env):
            log.warning(
                "context.skipped agent=%s run=%s reason=argument_too_large bytes=%d",
                agent,
                run_id,
                len(text.encode("utf-8")),
            )
            metrics.CONTEXT_DELIVERIES.labels(how="argv", outcome="skipped").inc()
            return base
        log.info(
            "context.given agent=%s run=%s via=%s bytes=%d",
            agent,
            run_id,
            options[0],
            len(text.encode("utf-8")),
        )
        metrics.CONTEXT_DELIVERIES.labels(how="argv", outcome="ok").inc()
        return Delivery(given, dict(env), "argv")
    directory = tempfile.mkdtemp(prefix="fleetmem-run-")  # 0700, this user only
    path = os.path.join(directory, CONTEXT_FILE_NAME)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    log.info(
        "context.given agent=%s run=%s via=%s bytes=%d",
        agent,
        run_id,
        CONTEXT_FILE_ENV,
        len(text.encode("utf-8")),
    )
    metrics.CONTEXT_DELIVERIES.labels(how="file", outcome="ok").inc()
    return Delivery(list(argv), {**env, CONTEXT_FILE_ENV: path}, "file", directory)


def for_run(
    app: App,
    *,
    agent: str,
    adapter: str,
    repo: str | None,
    run_id: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    has_prompt: bool,
    prompt: str | None = None,
) -> Delivery:
    """Assemble a ``fleetmem run``'s context (recording its loads) and hand it over; its facts
    are those relevant to ``prompt`` (the operator's prompt). An argument too long for exec
    loses whole parts to the pull rather than the whole context."""
    host = argv_host(adapter, argv, env, has_prompt=has_prompt)
    text = assemble_for_run(
        app, agent=agent, repo=repo, run_id=run_id, about=prompt or "", host=host
    )
    return deliver(adapter, argv, env, text, has_prompt=has_prompt, agent=agent, run_id=run_id)


def argv_host(
    adapter: str, argv: Sequence[str], env: Mapping[str, str], *, has_prompt: bool
) -> HostFit | None:
    """The exec limits of this very argv and environment, for an agent given the context as
    an argument; None for a plain command (a file: no limit)."""
    profile = {"claude-code": CLAUDE_CODE_RUN, "codex": CODEX_RUN}.get(adapter)
    if profile is None:
        return None

    def takes(text: str) -> bool:  # this very argv and environment, not only the argument
        options = context_options(adapter, text)
        assert options is not None
        return fits(with_options(argv, options, has_prompt=has_prompt), env)

    return HostFit(replace(profile, limit=per_argument_limit()), takes)


# ---- Claude Code sessions (hooks) ----------------------------------------------------------
def _session_file(home: Path, run_id: str) -> Path:
    return home.joinpath(*SESSION_DIR) / f"{_run_key(run_id)}.context.md"


def session_room(
    briefing_block: str, profile: HostProfile = CLAUDE_CODE_SESSION
) -> tuple[int, str]:
    """(room for the context, the briefing block to send) in one SessionStart answer to
    ``profile``'s host: its limit less the block and the blank line between; a block that
    would leave less than :data:`SESSION_CONTEXT_ROOM` is replaced by
    :data:`BRIEFING_POINTER`."""
    limit = profile.limit
    assert limit is not None
    if not briefing_block:
        return limit, ""
    if limit - profile.size(briefing_block) - 2 < SESSION_CONTEXT_ROOM:
        log.info("briefing.pointer reason=host_limit size=%d", profile.size(briefing_block))
        briefing_block = BRIEFING_POINTER
    return limit - profile.size(briefing_block) - 2, briefing_block


def for_session(
    app: App,
    *,
    agent: str,
    token: str,
    run_id: str,
    answer_by: float | None = None,
    room: int | None = None,
    profile: HostProfile = CLAUDE_CODE_SESSION,
) -> str:
    """A hooked session's context: the text its run was first given, or assembled now,
    fitted to ``room`` of ``profile``'s units (default: all the hook's answer may hold).

    ``answer_by`` (``time.monotonic()``) is when the hook's answer is due; the context gets at
    most ``SESSION_GRACE_S`` past it (the hook's watchdog ends the process soon after, and the
    briefing must not be lost with it): what is not ready by then is left out, logged.
    """
    path = _session_file(app.home, run_id)
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    host = within(profile, room)
    if answer_by is None:
        return _assemble_session(app, agent, token, run_id, path, threading.Event(), host)
    late = threading.Event()
    result: list[str] = []
    worker = threading.Thread(
        target=lambda: result.append(
            _assemble_session(app, agent, token, run_id, path, late, host)
        ),
        name="fleetmem-session-context",
        daemon=True,
    )
    worker.start()
    worker.join(max(0.0, answer_by + SESSION_GRACE_S - time.monotonic()))
    if result:
        return result[0]
    late.set()
    log.warning("context.skipped agent=%s run=%s reason=deadline", agent, run_id)
    metrics.CONTEXT_DELIVERIES.labels(how="hook", outcome="skipped").inc()
    return ""


def _assemble_session(
    app: App,
    agent: str,
    token: str,
    run_id: str,
    path: Path,
    late: threading.Event,
    host: HostFit,
) -> str:
    try:
        repo = app.runs.resolve_caller(token).repo
    except Exception as exc:  # the run is gone: no context rather than a failed hook
        log.warning("context.failed agent=%s run=%s error=%s", agent, run_id, type(exc).__name__)
        return ""
    # The session's prompts are not known yet: its facts beyond the pinned ones come with
    # each prompt (UserPromptSubmit).
    text = assemble_for_run(app, agent=agent, repo=repo, run_id=run_id, about="", host=host)
    if late.is_set():
        return text  # not given: nothing kept, so a resumed session assembles afresh
    try:
        _write_private(path, text)
    except OSError as exc:  # a resumed session then gets the context of that moment
        log.warning("context.keep_failed run=%s error=%s", run_id, type(exc).__name__)
    metrics.CONTEXT_DELIVERIES.labels(how="hook", outcome="ok" if text else "empty").inc()
    if text:
        log.info(
            "context.given agent=%s run=%s via=additionalContext bytes=%d",
            agent,
            run_id,
            len(text.encode("utf-8")),
        )
    return text


def forget_session(home: Path, run_id: str) -> None:
    """Drop a finished session's kept context (and the whole one kept for the pull)."""
    with contextlib.suppress(OSError):
        _session_file(home, run_id).unlink()
    forget_whole(home, run_id)


def session_start_answer(context: str, briefing: str) -> str:
    """The SessionStart hook's stdout: the context, then the fenced briefing; "" for none."""
    parts = [part for part in (context.rstrip("\n"), briefing) if part]
    if not parts:
        return ""
    additional = "\n\n".join(parts)
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": additional}}
    )
