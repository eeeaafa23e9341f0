"""Claude Code hooks: an interactive session observed as a fleetmem run.

``fleetmem hook claude-code EVENT`` reads the hook's JSON from stdin (docs/agents.md cites
the payloads) and answers on stdout:

- **SessionStart** opens a run for the session's directory (``claude-<session id>``), and,
  only when the agent has ``memory_briefing = true``, answers with the fenced briefing as
  ``additionalContext`` after writing the exposure rows of its facts. A resumed or compacted
  session keeps its run and is given the same briefing again. The run token goes to
  ``$CLAUDE_ENV_FILE`` when Claude Code offers one, so ``fleetmem`` commands the session
  runs are attributed.
- **UserPromptSubmit**: each request to remember in the person's own prompt, said as people
  say it ("remember that …", "please remember …", "don't forget: …", "note for next time:
  …", "remember: …"; :mod:`fleetmem.core.capture`), becomes an active fact with a human
  origin and the session as its conversation; the answer is one line per fact naming the
  exact stored wording. (Facts an agent proposes through the ``remember`` tool stay
  proposed: they may come from what it read.)
- **PostToolUse** and **PostToolUseFailure** (both registered by default) note file edits and
  commands, a failed one as failed, and heartbeat the run with the files edited. SessionEnd
  trusts a failure a hook saw even where the transcript says nothing of it.
- **SessionEnd** reads the session transcript for the result, model, cost and tool uses,
  adds what git saw change, closes the run with its run record, and leaves the episode to a
  detached ``fleetmem jobs``.

Every handler returns the text to print; errors are the caller's to swallow (hooks fail open).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from fleetmem.core.facts import Actor
from fleetmem.core.hosts import CLAUDE_CODE_SESSION
from fleetmem.errors import FleetmemError, InvalidInput, UnknownAgentWorkspace
from fleetmem.integrations import briefing as briefings
from fleetmem.integrations import context_delivery
from fleetmem.integrations.adapters.base import CommandRun, Edit, Observation
from fleetmem.integrations.adapters.claude_code import (
    ClaudeStreamParser,
    command_of,
    edit_path,
)
from fleetmem.integrations.attach import (
    Owners,
    ProcessId,
    attach_session,
    is_alive,
    session_owner,
)
from fleetmem.integrations.gitdiff import Snapshot, changed_since, take_snapshot
from fleetmem.integrations.hookstate import SessionState, StateFiles
from fleetmem.integrations.prompt_answers import prompt_answer
from fleetmem.integrations.records import (
    ProcessEnd,
    SessionPart,
    build_record,
    decide_outcome,
    verifications,
)
from fleetmem.service.bootstrap import App
from fleetmem.service.context_facts import facts_for_prompt
from fleetmem.service.fact_base import local_user
from fleetmem.service.fencing import fenced
from fleetmem.service.gitrepo import resolve_repository

log = logging.getLogger("fleetmem.hooks")

ADAPTER = "claude-code"
#: A SessionStart hook's hard deadlines for its briefing (Claude Code waits for the hook before
#: the session starts): at most this long for the episode provider (``provider_timeout`` when
#: that is shorter), after at most ``HOOK_BUILTIN_START_S`` for the built-in provider's cold
#: start. When they pass, the briefing is given without episodes, marked
#: ``provider_unavailable``, and stored so: the run's ``briefing`` tool serves the same
#: document until it asks for ``refresh``.
HOOK_PROVIDER_S = 1.0
HOOK_BUILTIN_START_S = 4.0
#: Kept back from the answer deadline for the local work after the provider's wait (the
#: facts and runs sections, the exposure rows, the fence).
HOOK_LOCAL_S = 0.5
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
#: At most this many sessions left behind by a dead agent are recorded after one
#: SessionStart (each reads its transcript), so the sweep stays short.
ORPHANS_PER_SWEEP = 3
#: A session whose agent process could not be told is taken as over after this long.
ORPHAN_MAX_AGE_S = 7 * 24 * 3600
_RUN_ID = re.compile(r"[^A-Za-z0-9._:-]")


def run_id_for(session_id: str, attempt: int = 0, prefix: str = "claude") -> str:
    base = f"{prefix}-" + _RUN_ID.sub("-", session_id)[:200]
    return base if attempt == 0 else f"{base}-{attempt + 1}"


def _session_id(payload: Mapping[str, Any]) -> str:
    sid = payload.get("session_id")
    if not isinstance(sid, str) or not sid.strip() or len(sid) > 256:
        raise InvalidInput("session_id", sid, "the hook payload has no session id")
    return sid


def _transcript_path(payload: Mapping[str, Any]) -> str | None:
    path = payload.get("transcript_path")
    return path if isinstance(path, str) and os.path.isabs(path) and len(path) < 4096 else None


def _cwd(payload: Mapping[str, Any], fallback: str | None = None) -> str:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and os.path.isabs(cwd):
        return cwd
    return fallback or os.getcwd()


class ClaudeHooks:
    """The hook handlers for one agent over one wired app.

    Codex's hooks take the same payloads and answers; :class:`~fleetmem.integrations.
    codex_hooks.CodexHooks` changes only what differs (names, the host's limit, the
    transcript's format), through the class attributes and :meth:`_transcript`.
    """

    #: The integration's name (``fleetmem hook NAME``) and where its session state lives.
    integration = "claude-code"
    #: The run record's ``adapter`` and the prefix of the session's run id.
    adapter = ADAPTER
    run_prefix = "claude"
    #: What the host takes whole from a SessionStart answer (:mod:`fleetmem.core.hosts`).
    profile = CLAUDE_CODE_SESSION

    def __init__(
        self,
        app: App,
        *,
        agent: str,
        environ: Mapping[str, str],
        owner: Callable[[], ProcessId | None] = session_owner,
        answer_by: float | None = None,
        workdir: str | None = None,
        in_daemon: bool = False,
    ) -> None:
        self.app = app
        # Answered by the daemon (after the hook has its answer): an episode is recorded
        # right here, where a hook of its own process starts `fleetmem jobs` to do it.
        self.in_daemon = in_daemon
        # Where the hook runs when the payload names no directory: this process's own, or
        # (answered by the daemon) the hook process's.
        self.workdir = workdir
        self.agent = agent
        self.environ = environ
        self.states = StateFiles(app.home, self.integration)
        # Finds the Claude Code process this hook runs for (our parent, through `sh -c`).
        self._owner = owner
        # time.monotonic() by which SessionStart's briefing must be ready (None: no deadline).
        self.answer_by = answer_by

    def handle(self, event: str, payload: Mapping[str, Any]) -> str:
        handler = {
            "SessionStart": self.session_start,
            "UserPromptSubmit": self.user_prompt_submit,
            "PostToolUse": self.post_tool_use,
            "PostToolUseFailure": self.post_tool_use,
            "SessionEnd": self.session_end,
        }.get(event)
        if handler is None:
            raise InvalidInput("event", event, "is not a hook fleetmem handles")
        return handler(payload)

    # ---- SessionStart -------------------------------------------------------------------
    def open_session(self, payload: Mapping[str, Any]) -> tuple[SessionState, bool]:
        """The session's run: the one already open for it, or a new one (True)."""
        sid = _session_id(payload)
        state = self.states.load(sid)
        if state is not None:
            return state, False
        cwd = _cwd(payload, self.workdir)
        for attempt in range(20):
            try:
                opened = self.app.runs.open_run(
                    self.agent,
                    workdir=cwd,
                    adapter=self.adapter,
                    run_id=run_id_for(sid, attempt, self.run_prefix),
                    source="hook",
                )
                break
            except InvalidInput as exc:
                if exc.field != "run_id":  # a resumed session whose first run is closed
                    raise
        else:
            raise InvalidInput(
                "run_id", run_id_for(sid, 0, self.run_prefix), "no free run id for the session"
            )
        repo = resolve_repository(cwd)
        state = SessionState(
            session_id=sid,
            agent=self.agent,
            run_id=opened.run_id,
            token=opened.token,
            opened_at=opened.opened_at,
            cwd=cwd,
            root=repo.root if repo else None,
            transcript=_transcript_path(payload),
        )
        self.states.save(state)
        self._export_token(state)
        self._attach(state)
        return state, True

    def _attach(self, state: SessionState) -> None:
        """Let the ``fleetmem mcp --attach`` of this agent process find the session's run (it
        gets no token of its own: see :mod:`.attach`), and note the process in the state, so
        the session is known to be over once it is gone (:meth:`record_orphans`)."""
        owner = self._owner()
        if owner is not None and (state.owner_pid, state.owner_started) != (
            owner.pid,
            owner.started,
        ):
            state.owner_pid, state.owner_started = owner.pid, owner.started
            self.states.save(state)
        try:
            attach_session(
                self.app.home,
                session_id=state.session_id,
                run_id=state.run_id,
                token=state.token,
                agent=state.agent,
                owner=owner,
            )
        except OSError as exc:  # the session goes on, its MCP calls unattributed
            log.warning("attach.failed run=%s error=%s", state.run_id, exc.strerror)

    def record_orphans(self, current: str | None = None, limit: int = ORPHANS_PER_SWEEP) -> int:
        """Record the sessions whose agent process is gone without a SessionEnd (killed,
        crashed, its terminal closed) from their transcripts, as ``crashed`` / ``unknown``;
        returns how many. A session with no known process counts as gone once it is older
        than :data:`ORPHAN_MAX_AGE_S`. Run after a SessionStart's answer is out."""
        recorded = 0
        for state in self.states.sessions():
            if recorded >= limit:
                break
            if state.session_id == current or not self._gone(state):
                continue
            if not self.states.claim(state.session_id):
                continue  # another hook is recording it
            log.info("hook.orphan run=%s", state.run_id)
            payload = {"session_id": state.session_id, "transcript_path": state.transcript}
            try:
                self.session_end(payload, ended=ProcessEnd(vanished=True))
            except FleetmemError as exc:  # recorded already, or refused: never try it again
                log.info("hook.orphan_dropped run=%s reason=%s", state.run_id, exc)
                self.states.remove(state.session_id)
                context_delivery.forget_session(self.app.home, state.run_id)
            recorded += 1
        return recorded

    def _gone(self, state: SessionState) -> bool:
        if state.owner_pid is None or state.owner_started is None:
            return time.time() - state.opened_at > ORPHAN_MAX_AGE_S
        return not is_alive(ProcessId(state.owner_pid, state.owner_started))

    def _export_token(self, state: SessionState) -> None:
        env_file = self.environ.get("CLAUDE_ENV_FILE")
        if not env_file:
            return
        fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"export FLEETMEM_RUN_TOKEN={state.token}\n")
            fh.write(f"export FLEETMEM_RUN_ID={state.run_id}\n")

    def session_start(self, payload: Mapping[str, Any]) -> str:
        state, new = self.open_session(payload)
        if not new:  # resumed, maybe by another Claude Code process: it is in this run now
            self._attach(state)
        try:
            self.app.agent_workspace(state.agent)
        except UnknownAgentWorkspace as exc:
            # No memory from another workspace, and not silence either: the session is
            # told (and the log says) why it has none. The run is still recorded.
            log.warning(
                "hook.no_workspace agent=%s run=%s error=%s", state.agent, state.run_id, exc
            )
            notice = f"fleetmem gave this session no memory: {exc}"
            return context_delivery.session_start_answer(notice, "")
        block = ""
        if self.app.settings.agent(self.agent).memory_briefing:
            text = self._briefing(state)  # first: it has the deadlines to keep
            block = briefings.fence(text, "").rstrip("\n") if text else ""
        # Both share what Claude Code takes whole from a hook (core.hosts).
        room, block = context_delivery.session_room(block, self.profile)
        # The run's assembled context files (loads recorded; a resumed session's first text).
        context = context_delivery.for_session(
            self.app,
            agent=state.agent,
            token=state.token,
            run_id=state.run_id,
            answer_by=self.answer_by,
            room=room,
            profile=self.profile,
        )
        return context_delivery.session_start_answer(context, block)

    def _briefing(self, state: SessionState) -> str | None:
        """The run's briefing as served to it (exposure written), computed once per run."""
        app = self.app
        caller = app.runs.resolve_caller(state.token)
        provider_wait, builtin_start = self._provider_waits()
        stored = briefings.ensure_stored(
            app, caller, provider_wait=provider_wait, builtin_start=builtin_start
        )
        if not stored:
            log.warning(
                "briefing.skipped agent=%s run=%s reason=briefing_failed", state.agent, state.run_id
            )
            app.briefings.count_delivery(state.agent, "prompt", None, reason="briefing_failed")
            return None
        served = app.agent_memory.briefing(caller, delivery="prompt")
        if served.text:
            log.info(
                "briefing.given agent=%s run=%s bytes=%d %s",
                state.agent,
                state.run_id,
                served.size_bytes,
                briefings.counts(served.text),
            )
        return served.text or None

    def _provider_waits(self) -> tuple[float, float]:
        """(provider wait, built-in start allowance) within what is left before the answer
        deadline: the hook's caps while there is time, less as it runs out, none after."""
        if self.answer_by is None:
            return HOOK_PROVIDER_S, HOOK_BUILTIN_START_S
        left = max(0.0, self.answer_by - time.monotonic() - HOOK_LOCAL_S)
        provider_wait = min(HOOK_PROVIDER_S, left)
        return provider_wait, min(HOOK_BUILTIN_START_S, left - provider_wait)

    def snapshot_after_start(self, payload: Mapping[str, Any]) -> None:
        """Snapshot the checkout (after the answer is out: it may take a moment)."""
        state = self.states.load(_session_id(payload))
        if state is None or state.root is None or state.tree is not None:
            return
        snap = take_snapshot(state.root)
        if snap is not None:
            state.tree = snap.tree
            self.states.save(state)

    # ---- UserPromptSubmit ---------------------------------------------------------------
    def user_prompt_submit(self, payload: Mapping[str, Any]) -> str:
        # Imported here: the capture rules' patterns take a hook process about 0.1 s to
        # compile, which no other event should pay.
        from fleetmem.core.capture import without_requests

        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            return ""
        sid = _session_id(payload)
        state = self.states.load(sid)
        lines, for_model = self._captures(prompt, sid, state)
        # Matched to the task the prompt asks for, not to the facts it just asked to keep.
        task = without_requests(prompt)
        facts = self._prompt_facts(task, state) if state is not None else ""
        if not lines and not facts:
            return ""
        block = briefings.fence(facts, "").rstrip("\n") if facts else ""
        return prompt_answer("\n".join(lines), block, for_model="\n".join(for_model))

    def _captures(
        self, prompt: str, sid: str, state: SessionState | None
    ) -> tuple[list[str], list[str]]:
        """Store each request to remember in the prompt: one line per fact for the person,
        and the same news for the model with the stored words fenced."""
        from fleetmem.core.capture import captured_facts

        wanted = captured_facts(prompt)
        if not wanted:
            return [], []
        actor = Actor("human", local_user().name, state.run_id if state else None)
        lines = []
        # The model is given the stored words only fenced (the person sees them plain).
        for_model: list[str] = []
        agent = state.agent if state is not None else self.agent
        for body in wanted:  # at most core.capture.MAX_CAPTURES
            try:
                # Kept in the workspace the agent's runs act in.
                # In the hook's own process the vector is left to the next search by
                # meaning (loading the embedder would cost 0.4 s of the 0.3 s budget).
                stored = self.app.for_agent(agent).facts.add(
                    body, actor=actor, conversation=f"{self.integration}:{sid}",
                    embed=self.in_daemon,
                )  # fmt: skip
                fact = stored.fact
                lines.append(f'fleetmem remembered "{fact.body}" ({fact.id})')
                for_model.append(f"fleetmem remembered fact {fact.id}, stored as:")
                for_model.append(fenced(fact.body, field="fact", source="fleetmem-memory"))
                log.info("hook.remembered fact=%s session_run=%s", fact.id, actor.run_id)
            except FleetmemError as exc:
                lines.append(f'fleetmem did not remember "{body}": {exc}')
                for_model.append(f"fleetmem did not remember it ({exc.code}):")
                for_model.append(fenced(str(exc), field="reason", source="fleetmem-memory"))
        return lines, for_model

    def _prompt_facts(self, prompt: str, state: SessionState) -> str:
        """The facts relevant to this prompt the session was not shown yet (exposure written),
        when the agent's recall is on and its briefing does not carry its facts.

        Matched by meaning and words when the daemon answers; by words alone (the prompt's
        and its focus's) in the hook's own process, which would otherwise load the embedding
        model for every prompt: 0.6 s and 300 MB, where the answer is due in 0.3 s."""
        if not self.app.settings.agent(state.agent).prompt_facts or not prompt.strip():
            return ""
        try:
            repo = self.app.runs.resolve_caller(state.token).repo
            return facts_for_prompt(
                self.app.for_agent(state.agent).facts,
                prompt,
                run_id=state.run_id,
                agent=state.agent,
                repo=repo,
                by_meaning=self.in_daemon,
            )
        except FleetmemError as exc:  # facts are an aid: the prompt goes on without them
            log.info("hook.prompt_facts_failed run=%s reason=%s", state.run_id, exc)
            return ""

    # ---- PostToolUse --------------------------------------------------------------------
    def post_tool_use(self, payload: Mapping[str, Any]) -> str:
        tool = payload.get("tool_name")
        if not isinstance(tool, str):
            return ""
        tool_input = payload.get("tool_input")
        path = edit_path(tool, tool_input)
        command = command_of(tool, tool_input)
        if path is None and command is None:
            return ""
        state, _ = self.open_session(payload)
        failed = payload.get("hook_event_name") == "PostToolUseFailure"
        if path is not None:
            if not failed:
                self.states.append_event(state.session_id, {"type": "edit", "path": path})
                self.heartbeat_edit(state, path)
        elif command is not None:
            self.states.append_event(
                state.session_id, {"type": "command", "command": command, "failed": failed}
            )
        return ""

    def heartbeat_edit(self, state: SessionState, path: str) -> None:
        """Tell the run's presence of an edit of ``path`` (repository files only), and mark
        the file fresh in the session's state once the run has heard of it."""
        absolute = path if os.path.isabs(path) else os.path.join(state.cwd, path)
        files = [absolute] if state.root and absolute.startswith(state.root + "/") else []
        try:
            self.app.runs.heartbeat(state.token, files=files)
        except FleetmemError as exc:
            log.info("hook.heartbeat_refused run=%s reason=%s", state.run_id, exc)
            return
        # Re-read: another hook of the session may have saved the state since it was loaded.
        latest = self.states.load(state.session_id) or state
        latest.heartbeats[path] = time.time()
        self.states.save(latest)

    # ---- SessionEnd ---------------------------------------------------------------------
    def session_end(self, payload: Mapping[str, Any], *, ended: ProcessEnd | None = None) -> str:
        sid = _session_id(payload)
        state = self.states.load(sid)
        if state is None:
            return ""
        observation = self._transcript(payload.get("transcript_path") or state.transcript, sid)
        seen = _events_from_hooks(self.states.events(sid))
        if not observation.events:
            observation.events.extend(seen)
        else:
            observation.events[:] = _with_failures(observation.events, seen)
        extra: tuple[str, ...] = ()
        if state.root is not None and state.tree is not None:
            changed = changed_since(Snapshot(root=state.root, tree=state.tree))
            extra = tuple(os.path.join(state.root, p) for p in changed)
        agent = self.app.settings.agent(state.agent)
        patterns = agent.verify_patterns
        checks = verifications(observation.commands(), patterns)
        outcome = decide_outcome(ended or ProcessEnd(returncode=0), observation, checks)
        record = build_record(
            run_id=state.run_id,
            agent=state.agent,
            adapter=self.adapter,
            started_at=state.opened_at,
            ended_at=time.time(),
            outcome=outcome,
            parts=[SessionPart(observation, state.cwd, patterns, extra)],
            spawned=True,
            prompt=None,
            configured_model=agent.model,
        )
        result = self.app.memory.ingest_run(record, process_now=self.in_daemon)
        self.states.remove(sid)
        context_delivery.forget_session(self.app.home, state.run_id)
        Owners(self.app.home).forget_session(sid)
        log.info(
            "hook.closed run=%s outcome=%s episode=%s", state.run_id, outcome[0], result.status
        )
        if result.episode_id is not None and not self.in_daemon:
            record_in_background(self.app.home, self.environ)
        return ""

    def _transcript(self, path: object, session_id: str) -> Observation:
        parser = ClaudeStreamParser()
        parser.observation.session_id = session_id
        if isinstance(path, str) and os.path.isabs(path):
            try:
                with open(path, "rb") as fh:
                    for raw in fh.read(MAX_TRANSCRIPT_BYTES).splitlines():
                        parser.feed(raw.decode("utf-8", "replace"))
            except OSError as exc:
                log.info(
                    "hook.transcript_unreadable session_run=%s error=%s", session_id, exc.strerror
                )
        parser.finish()
        return parser.observation


def _events_from_hooks(items: list[dict[str, Any]]) -> list[Edit | CommandRun]:
    out: list[Edit | CommandRun] = []
    for item in items:
        if item.get("type") == "edit" and isinstance(item.get("path"), str):
            out.append(Edit(item["path"]))
        elif item.get("type") == "command" and isinstance(item.get("command"), str):
            failed = bool(item.get("failed"))
            out.append(CommandRun(item["command"], None, failed))
    return out


def _with_failures(
    events: list[Edit | CommandRun], seen: list[Edit | CommandRun]
) -> list[Edit | CommandRun]:
    """The transcript's events, each command the hooks saw fail marked failed. The hooks
    note every run of a command in order, so the n-th run of a command in the transcript
    is the n-th the hooks saw."""
    outcomes: dict[str, list[bool]] = {}
    for event in seen:
        if isinstance(event, CommandRun):
            outcomes.setdefault(event.command, []).append(event.failed)
    runs: dict[str, int] = {}
    out: list[Edit | CommandRun] = []
    for event in events:
        if isinstance(event, CommandRun) and not event.subagent:
            n = runs.get(event.command, 0)
            runs[event.command] = n + 1
            hooked = outcomes.get(event.command, [])
            if not event.failed and n < len(hooked) and hooked[n]:
                event = replace(event, failed=True)
        out.append(event)
    return out


def record_in_background(home: Path, environ: Mapping[str, str]) -> None:
    """Start ``fleetmem jobs`` detached, so the episode is recorded off the hook's path."""
    env = {**environ, "FLEETMEM_HOME": str(home)}
    try:
        subprocess.Popen(
            [sys.executable, "-m", "fleetmem", "jobs"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        log.info("hook.jobs_not_started error=%s", exc.strerror)
