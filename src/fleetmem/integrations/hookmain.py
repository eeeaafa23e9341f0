"""``fleetmem hook claude-code|codex EVENT``: the entry point Claude Code and Codex run for
every hook.

It starts fast (only the standard library is imported until the payload is read) and fails
open: whatever goes wrong, from a bad payload to a broken store, it logs one line to
``$FLEETMEM_HOME/logs/hooks.log``, prints nothing and exits 0, so the session goes on. A
watchdog ends the process with status 0 when its budget runs out, whatever it was doing; a
SessionStart answers within ``provider_timeout`` plus local work even when the episode
provider is down. Codex gives SessionEnd at most 3 seconds, so there the process answers at
once and records the session in a detached child of its own.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleetmem import metrics, save_compiled
from fleetmem.core import strictjson

if TYPE_CHECKING:
    from fleetmem.integrations.hookrelay import RelayedHook

#: Seconds each hook may take in all, before the watchdog exits 0 (Claude Code's own hook
#: timeouts, set by ``fleetmem install claude-code``, are longer).
BUDGETS = {"SessionStart": 8.0, "UserPromptSubmit": 8.0, "PostToolUse": 5.0, "SessionEnd": 25.0}
#: When SessionStart's briefing must be ready, counted from the hook's start: what is left of
#: it bounds the waits on the episode provider (none at all once it has passed), so the answer
#: goes out well inside the watchdog's budget even on a loaded machine.
ANSWER_BY_S = 6.0
DEFAULT_BUDGET = 5.0
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024
AGENT_ENV = "FLEETMEM_AGENT"
#: Set by ``fleetmem run`` in its child's environment (Claude Code passes it on to its hooks).
SUPERVISED_ENV = "FLEETMEM_RUN_ID"
#: The longest a hook waits for the app to close once its work is done.
CLOSE_S = 0.5

log = logging.getLogger("fleetmem.hooks")

#: What to print if the hook fails or runs out of time once it knows the prompt asked to
#: remember something: the person is told in one line that nothing was kept, never silence.
_fallback: list[str] = []


def _home(home: str | None, environ: Mapping[str, str]) -> Path:
    from fleetmem.homedir import default_home

    return Path(home) if home else default_home(environ)


#: ``logs/hooks.log`` is rotated past this size, keeping three older files.
LOG_MAX_BYTES = 1_048_576


def hooks_log_handler(home: Path, *, one_process: bool = False) -> logging.Handler:
    """A handler writing ``home/logs/hooks.log``, every line redacted.

    ``one_process``: for a hook's own process, which writes a line or two and exits. While
    the file is below its size it is appended to by a plain handler; the rotating one (whose
    module brings sockets and pickling: 6 ms of a 70 ms hook) is made only when the file is
    due to rotate."""
    directory = home / "logs"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "hooks.log"
    handler: logging.Handler
    try:
        small = one_process and path.stat().st_size < LOG_MAX_BYTES
    except OSError:
        small = one_process  # no file yet
    if small:
        handler = logging.FileHandler(path, encoding="utf-8")
    else:
        from logging.handlers import RotatingFileHandler

        handler = RotatingFileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    from fleetmem.logsafe import protect

    protect(handler)  # every line redacted, whatever a message or an exception carries
    return handler


def log_to_file(home: Path) -> None:
    """Send this process's fleetmem log lines to ``home/logs/hooks.log`` only."""
    handler = hooks_log_handler(home, one_process=True)
    root = logging.getLogger("fleetmem")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False


#: The integrations with hooks; a session runs as the agent of the same name unless told.
INTEGRATIONS = ("claude-code", "codex")


def _parse(argv: Sequence[str]) -> tuple[str, str, str | None]:
    """``claude-code|codex EVENT [--agent NAME]`` -> (integration, event, agent)."""
    args = list(argv)
    agent = None
    if "--agent" in args:
        at = args.index("--agent")
        agent = args[at + 1] if at + 1 < len(args) else None
        del args[at : at + 2]
    if len(args) != 2:
        raise ValueError("usage: fleetmem hook claude-code|codex EVENT [--agent NAME]")
    return args[0], args[1], agent


def run_hook(
    argv: Sequence[str],
    *,
    home: str | None = None,
    environ: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    shared_app: Any = None,
    on_answer: Callable[[str], None] | None = None,
    owner: Callable[[], Any] | None = None,
    workdir: str | None = None,
) -> tuple[int, str]:
    """Handle one hook; returns (exit status, text to print). Never raises.

    In the hook's own process (``shared_app`` None) the application is built for this one
    event and closed after it. The daemon passes its own (``shared_app``, see
    :func:`serve_relayed`): nothing is built or closed, logging stays the daemon's, and a
    SessionStart's answer goes to ``on_answer`` before the snapshot taken after it, and
    ``owner`` and ``workdir`` describe the hook process rather than the daemon.
    """
    env = dict(os.environ if environ is None else environ)
    started = time.monotonic()
    event = "?"
    answer = ""
    app = None
    payload: Any = None
    own_process = shared_app is None
    emit = _emit if on_answer is None else on_answer
    try:
        fleetmem_home = _home(home, env)
        if own_process:
            log_to_file(fleetmem_home)
        integration, event, agent = _parse(argv)
        if integration not in INTEGRATIONS:
            known = ", ".join(INTEGRATIONS)
            raise ValueError(f"unknown integration {integration!r}; known: {known}")
        raw = stdin if stdin is not None else sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        payload = strictjson.loads(raw or b"{}", root="<hook payload>", max_bytes=MAX_PAYLOAD_BYTES)
        if not isinstance(payload, dict):
            raise ValueError("the hook payload is not a JSON object")
        # The ingress boundary for hooks: every string of the payload (session id, cwd,
        # prompt, tool input, paths) is stripped of invisibles and redacted before any of it
        # is looked at, logged or handed to the service layer.
        from fleetmem.core.ingress import clean_payload

        payload = clean_payload(payload)
        if env.get(SUPERVISED_ENV):
            # `fleetmem run` already opened, briefs and records this session from the agent's
            # own stream: a second run opened by the hooks would count the same work twice.
            log.info("hook.skipped event=%s reason=supervised", event)
            return 0, ""
        if not _worth_a_store(event, payload, fleetmem_home, integration):
            return 0, ""  # most prompts and tool uses: nothing to do, no store opened
        if own_process and event == "UserPromptSubmit" and _asks_to_remember(payload):
            _fallback[:] = [_not_stored(payload, "fleetmem did not answer in time")]
        noted = _noted_without_the_store(
            fleetmem_home, integration, event, payload, defer=own_process, agent=agent
        )
        if noted:
            log.info(
                "hook.done event=%s ms=%d fast=1%s%s",
                event,
                (time.monotonic() - started) * 1000,
                " heartbeat=deferred" if noted == DEFERRED else "",
                "" if own_process else " relay=1",
            )
            return 0, ""
        hooks_type = hooks_class(integration)
        if own_process:
            from fleetmem.service.bootstrap import build

            app = build(fleetmem_home, env)
        hooks = hooks_type(
            shared_app if app is None else app,
            agent=agent or env.get(AGENT_ENV) or integration,
            environ=env,
            answer_by=started + ANSWER_BY_S,
            workdir=workdir,
            in_daemon=not own_process,
            **({} if owner is None else {"owner": owner}),
        )
        if (
            own_process
            and event == "SessionStart"
            and hooks.app.settings.agent(hooks.agent).memory_briefing
        ):
            from fleetmem.integrations.briefing import warm_up

            # In the background: opening the provider (the built-in one imports the MCP SDK)
            # overlaps opening the run; the briefing waits for it only within its deadline.
            threading.Thread(
                target=warm_up, args=(app,), name="fleetmem-warm-up", daemon=True
            ).start()
        if event == "SessionEnd" and not own_process:
            emit("")  # the agent is closing: its hook returns now, the daemon records after
        answer = hooks.handle(event, payload)
        if event == "SessionStart":
            emit(answer)  # the answer goes out first: the snapshot may take a moment
            answer = ""
            hooks.snapshot_after_start(payload)
            if not own_process:  # the daemon has time for sessions their agents left behind
                hooks.record_orphans(current=payload.get("session_id"))
        elif event == "SessionEnd":  # nobody waits on it (Codex's runs detached)
            hooks.record_orphans(current=payload.get("session_id"))
        log.info(
            "hook.done event=%s ms=%d%s",
            event,
            (time.monotonic() - started) * 1000,
            "" if own_process else " relay=1",
        )
    except BaseException as exc:  # fail open: log, answer nothing (but a lost capture), exit 0
        log.warning("hook.failed event=%s error=%s: %s", event, type(exc).__name__, str(exc)[:300])
        answer = ""
        lost_capture = isinstance(payload, dict) and _asks_to_remember(payload)
        if (_fallback and own_process) or (not own_process and lost_capture):
            answer = _not_stored(payload, f"{type(exc).__name__}: {exc}")
    finally:
        if own_process:
            _fallback.clear()
        if app is not None:
            _close(app)
    return 0, answer


def serve_relayed(app: Any, hook: RelayedHook, reply: Callable[[str], None]) -> None:
    """The daemon's side of :mod:`fleetmem.integrations.hookrelay`: one hook, answered with
    the daemon's application (nothing to import or open, so it answers in milliseconds).
    The session's owner is found from the hook process, as that process would find it."""
    from fleetmem.integrations.attach import session_owner
    from fleetmem.integrations.hookrelay import Declined

    # A hook process reads the configuration as it is now; so does its daemon, here.
    error = app.config.reload_if_changed()
    if error is not None:
        raise Declined(f"configuration: {error.key}")
    _, answer = run_hook(
        hook.argv,
        home=str(app.home),
        environ=hook.environ,
        stdin=hook.payload,
        shared_app=app,
        on_answer=reply,
        owner=functools.partial(session_owner, hook.pid),
        workdir=hook.cwd,
    )
    reply(answer)


#: Seconds after a daemon starts before it makes the int8 query copy, when it has none.
QUERY_MODEL_AFTER_S = 30.0


def warm_for_hooks(app: Any) -> None:
    """Load, once in the daemon, what the first relayed SessionStart would otherwise load
    while a session waits on it (measured: 870 ms for a new daemon's first session against
    131-165 ms for the next): the hook modules, and one preview assembly (it writes
    nothing) for the tokenizer and the store's statements. Best effort: a failure is logged.

    The offline embedder is loaded first: building its session folds the model's int8
    weights to float32 through about 60 MiB of temporaries, handed back once it is built.
    Loaded by the assembly instead, after the token counter (about 61 MiB), both were
    resident at once: the daemon's peak at 100,000 episodes was 419 MiB, 358 MiB this way.
    """
    load = getattr(app.embedder, "load", None)  # None: vectors off, or a remote embedder
    if callable(load):
        try:
            load()
        except Exception as exc:  # no model: the assembly still warms the rest
            log.info("hook.warm_failed part=embedder error=%s", type(exc).__name__)
    try:
        from fleetmem.integrations import (
            claude_hooks,  # and, through it, the rest of the hooks
            codex_hooks,  # noqa: F401  (and the rollout reader)
        )

        app.files.assemble(claude_hooks.ADAPTER)  # the agent hooks run as by default
    except Exception as exc:
        log.info("hook.warm_failed error=%s", type(exc).__name__)
    # Then the int8 copy of the model that embeds queries in about half the time: made once per
    # machine (a child process, a few seconds), then loaded from the cache by every process.
    # Made a while after start, not during it: a daemon's first minute serves the sessions
    # that were waiting for it, and a daemon started only for a moment makes nothing.
    prepare = getattr(app.embedder, "prepare_query_model", None)
    if callable(prepare):
        try:
            prepare(delay_s=QUERY_MODEL_AFTER_S)
        except Exception as exc:  # queries stay on the shipped model
            log.info("hook.warm_failed part=query_model error=%s", type(exc).__name__)


def _close(app: Any) -> None:
    """Close the app, waiting at most ``CLOSE_S``: a provider that hangs would hold a stdio
    session open for its whole connect timeout, and the session (and its work) is done."""

    def close() -> None:
        try:
            app.close()
        except Exception as exc:
            log.warning("hook.close_failed error=%s", type(exc).__name__)

    closer = threading.Thread(target=close, name="fleetmem-hook-close", daemon=True)
    closer.start()
    closer.join(CLOSE_S)
    if closer.is_alive():
        log.info("hook.close_abandoned after=%gs", CLOSE_S)


def _asks_to_remember(payload: Mapping[str, object]) -> bool:
    from fleetmem.core.capture import captured_facts

    prompt = payload.get("prompt")
    return isinstance(prompt, str) and bool(captured_facts(prompt))


def _not_stored(payload: Mapping[str, object], reason: str) -> str:
    """The one line telling the person their request to remember was not kept."""
    from fleetmem.core.capture import captured_facts
    from fleetmem.integrations.prompt_answers import prompt_answer

    prompt = payload.get("prompt")
    wanted = captured_facts(prompt) if isinstance(prompt, str) else []
    first = wanted[0] if wanted else ""
    more = f" and {len(wanted) - 1} more" if len(wanted) > 1 else ""
    reason = " ".join(reason.split())[:200]
    return prompt_answer(
        f'fleetmem could not store "{first}"{more}; nothing was remembered ({reason}).'
        " Say it again once fleetmem works: `fleetmem doctor` may tell why."
    )


def hooks_class(integration: str) -> Any:
    if integration == "codex":
        from fleetmem.integrations.codex_hooks import CodexHooks

        return CodexHooks
    from fleetmem.integrations.claude_hooks import ClaudeHooks

    return ClaudeHooks


#: What :func:`_noted_without_the_store` answers when it left the heartbeat to a process of
#: its own.
DEFERRED = "deferred"


def _noted_without_the_store(
    home: Path,
    integration: str,
    event: str,
    payload: Mapping[str, object],
    *,
    defer: bool = False,
    agent: str | None = None,
) -> bool | str:
    """The PostToolUse hot path: a command, or an edit of a file heartbeated moments ago, in
    a session whose run is open, is only appended to the session's event file (SessionEnd
    reads it); nothing is imported beyond the standard library and no store is opened.

    With ``defer`` (the hook's own process), the first edit of a file is noted the same way
    and its heartbeat left to a detached process (:mod:`fleetmem.integrations.hook_heartbeat`),
    so the agent does not wait for the application to be built: :data:`DEFERRED`."""
    if event not in ("PostToolUse", "PostToolUseFailure"):
        return False
    from fleetmem.integrations.adapters.claude_code import command_of, edit_path
    from fleetmem.integrations.hookstate import HEARTBEAT_FRESH_S, StateFiles

    sid = payload.get("session_id")
    tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(sid, str) or not sid.strip() or not isinstance(tool, str):
        return False
    states = StateFiles(home, integration)
    state = states.load(sid)
    if state is None:
        return False  # no run yet: the full path opens one
    failed = event == "PostToolUseFailure"
    path = edit_path(tool, tool_input)
    if path is not None:
        if failed:
            return True  # a failed edit changed nothing; the full path would skip it too
        noted: bool | str = True
        last = state.heartbeats.get(path)
        if last is None or time.time() - last > HEARTBEAT_FRESH_S:
            if not defer:
                return False  # the run's presence must hear of this file
            from fleetmem.integrations import hook_heartbeat

            try:
                hook_heartbeat.spawn(home, integration, agent, sid, path)
            except OSError as exc:  # no process to be had: heartbeat here, as before
                log.info("hook.heartbeat_not_deferred error=%s", type(exc).__name__)
                return False
            noted = DEFERRED
        states.append_event(sid, {"type": "edit", "path": path})
        return noted
    command = command_of(tool, tool_input)
    if command is None:
        return False
    states.append_event(sid, {"type": "command", "command": command, "failed": failed})
    return True


def _worth_a_store(event: str, payload: Mapping[str, object], home: Path, integration: str) -> bool:
    """False for hook calls that cannot change anything, answered without opening the store:
    an empty prompt, a tool that neither edits nor runs a command."""
    from fleetmem.integrations.adapters.claude_code import command_of, edit_path

    if event == "UserPromptSubmit":
        # Only here: compiling the capture rules costs a hook process about 0.1 s.
        from fleetmem.core.capture import captured_facts

        # A prompt of an open session is given the facts relevant to it when its agent takes
        # them (read from the configuration alone); otherwise only a request to remember
        # needs the store.
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            return False
        if captured_facts(prompt):
            return True
        sid = payload.get("session_id")
        if not prompt.strip() or not isinstance(sid, str):
            return False
        from fleetmem.config.loading import load_settings
        from fleetmem.integrations.hookstate import StateFiles

        state = StateFiles(home, integration).load(sid)
        return state is not None and load_settings(home).agent(state.agent).prompt_facts
    if event in ("PostToolUse", "PostToolUseFailure"):
        tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
        if not isinstance(tool, str):
            return False
        return edit_path(tool, tool_input) is not None or command_of(tool, tool_input) is not None
    return True


def _emit(text: str) -> None:
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()


def _out_of_time() -> None:
    """The watchdog: exit 0 now, telling the person first if a capture is being lost."""
    try:
        if _fallback:
            _emit(_fallback[0])
    finally:
        os._exit(0)


def _relayed(
    argv: Sequence[str],
    event: str,
    home: str | None,
    budget: float,
    payload: bytes | None = None,
) -> tuple[str | None, bytes | None]:
    """The running daemon's answer, and the payload read for it (or given: a detached
    child's); (None, payload) when no daemon took the event (see
    :mod:`fleetmem.integrations.hookrelay`)."""
    from fleetmem.integrations import hookrelay

    if not hookrelay.relayable(event, os.environ):
        return None, payload
    try:
        fleetmem_home = _home(home, os.environ)
        if payload is None:
            payload = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    except Exception:
        return None, payload  # the home or stdin cannot be read: the full path says why
    try:
        # The daemon's answer must arrive before the watchdog fires, with time to print it.
        return hookrelay.ask(fleetmem_home, argv, os.environ, payload, budget - 1.0), payload
    except Exception:
        return None, payload


def _detached(argv: Sequence[str], event: str) -> bytes | None:
    """For Codex's SessionEnd (Codex kills it after 3 seconds, whatever its timeout): read
    the payload, then go on in a child in a session of its own, with no standard streams
    Codex waits on, while this process exits 0 at once. None for every other hook, or when
    no child can be made (the work is then done here, within the watchdog's budget)."""
    if list(argv[:1]) != ["codex"] or event != "SessionEnd" or not hasattr(os, "fork"):
        return None
    payload = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    try:
        pid = os.fork()
    except OSError:
        return payload
    if pid > 0:
        os._exit(0)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return payload


def main(argv: Sequence[str], *, home: str | None = None) -> int:
    """The process entry: a watchdog, then :func:`run_hook`; always exits 0."""
    metrics.unexposed()  # this process never serves /metrics: counting would only cost time
    event = argv[1] if len(argv) > 1 else ""
    budget = BUDGETS.get(event, DEFAULT_BUDGET)
    detached = _detached(argv, event)  # before the watchdog's thread: fork copies only one
    watchdog = threading.Timer(budget, _out_of_time)
    watchdog.daemon = True
    watchdog.start()
    # A detached child (Codex's SessionEnd) hands its payload to the daemon too, when one
    # listens, rather than building the application and recording beside it.
    answer, payload = _relayed(argv, event, home, budget, detached)
    if answer is None:
        _, answer = run_hook(argv, home=home, stdin=payload)
    try:
        _emit(answer)
    except OSError as exc:  # Claude Code stopped listening; still exit 0
        log.warning("hook.answer_lost error=%s", type(exc).__name__)
    watchdog.cancel()
    # The store is closed; skip the interpreter's teardown of the libraries it loaded (and
    # so its exit handlers: those that keep newly compiled dataclass methods and patterns run
    # here).
    save_compiled()
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)
