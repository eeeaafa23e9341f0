"""``fleetmem run AGENT``: one supervised agent run, from open to episode.

1. Resolve the agent (``[agent.NAME]``), its working directory and the operator's prompt;
   a repository's ``.fleetmem.toml`` is checked before anything starts.
2. Open a live run (token, presence) and snapshot the checkout for the git fallback.
3. With ``memory_briefing = true``: compute the briefing (never waiting on the provider
   longer than ``provider_timeout``), fence it with a fresh nonce in front of the prompt,
   check it fits one argument, write the exposure rows of its facts, then spawn. Any failure
   spawns with the prompt alone (a WARN and a counted skip). The composed prompt exists only
   in memory and in the child's argv.
4. Spawn the adapter's argv (prompt last) with ``FLEETMEM_RUN_TOKEN`` in its environment, in
   its own process group; read its stdout through the adapter's parser; heartbeat with the
   files it edits; stop it (SIGTERM, then SIGKILL after ``kill_grace``) at ``timeout`` or when
   the operator interrupts. A process killed by a signal fleetmem did not send is started
   again up to ``respawns`` times, as the same run with the same composed prompt.
5. Close the run by ingesting its run record (stream + git fallback); only then record the
   episode to the provider, off the supervision path.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from fleetmem.config import BUILTIN_PROVIDER, apply_project
from fleetmem.core.facts import DEFAULT_WORKSPACE
from fleetmem.errors import InvalidInput, StoreError
from fleetmem.integrations import briefing as briefings
from fleetmem.integrations import context_delivery
from fleetmem.integrations.gitdiff import Snapshot, changed_since, take_snapshot
from fleetmem.integrations.process import Heartbeats, Limits, Spawn, run_process
from fleetmem.integrations.records import (
    ProcessEnd,
    SessionPart,
    build_record,
    decide_outcome,
    verifications,
)
from fleetmem.integrations.spec import AgentSpec, resolve_agent, resolve_prompt, run_variables
from fleetmem.service.bootstrap import App
from fleetmem.service.gitrepo import Repository, resolve_repository
from fleetmem.service.runs import OpenedRun

log = logging.getLogger("fleetmem.supervisor")

TOKEN_ENV = "FLEETMEM_RUN_TOKEN"
#: How long ``fleetmem run`` waits for its episode to reach the in-process built-in provider
#: before leaving it to the daemon's retries (its cold start is set-up time, as at spawn). An
#: upstream provider gets ``provider_timeout``: a hung one must not hold the close any longer.
RECORD_WAIT_S = 10.0
#: What closing the provider sessions may take once the close budget is spent (a stdio
#: upstream that hangs would otherwise hold ``fleetmem run`` for its whole close timeout).
RELEASE_MIN_S = 0.5


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a supervised run ended, and what fleetmem recorded."""

    run_id: str
    agent: str
    outcome: str
    reason: str
    exit_code: int
    episode: str
    result_text: str | None


#: Where run records the store refused are kept (``$FLEETMEM_HOME/unsent-runs/RUN.json``).
UNSENT_DIR = "unsent-runs"


def keep_unsent(home: Path, run_id: str, record: Mapping[str, object]) -> Path:
    """Write a refused run record where ``fleetmem runs ingest FILE`` can send it later."""
    import json

    folder = home / UNSENT_DIR
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{run_id}.json"
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    path.chmod(0o600)
    return path


def exit_code_for(outcome: tuple[str, str], end: ProcessEnd) -> int:
    """``fleetmem run``'s own exit status: the agent's, or the shell's convention for how it
    was stopped (124 timed out, 127 not started, 130 interrupted, 128+N killed by signal N)."""
    if outcome[1] == "spawn_failed":
        return 127
    if end.timed_out:
        return 124
    if end.cancelled:
        return 130
    if end.signal is not None:
        return 128 + end.signal
    return end.returncode or 0


class Supervisor:
    """Runs agents for one :class:`App`."""

    def __init__(
        self,
        app: App,
        *,
        environ: Mapping[str, str],
        out: IO[str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.app = app
        self.environ = dict(environ)
        self.out = out
        self.clock = clock
        self._close_by: float | None = None  # monotonic deadline of the run's close

    # ---- the run ------------------------------------------------------------------------
    def run(
        self,
        agent: str,
        *,
        prompt: str | None = None,
        workdir: str | None = None,
        cancel: threading.Event | None = None,
    ) -> RunResult:
        """Supervise one run of ``agent`` to its end; raises only before anything started.

        The run acts in its agent's workspace (``[agent.NAME] workspace``): its facts and
        context come from there and its exposures and loads are recorded there. A key naming
        no workspace stops the run here (UnknownAgentWorkspace), before anything starts."""
        settings = self.app.settings
        spec = resolve_agent(
            settings, agent, workdir=workdir, home=self.app.home, environ=self.environ
        )
        app = self._agent_app(spec.name)
        repo = resolve_repository(spec.workdir)
        if repo is not None:
            apply_project(settings, Path(repo.root))  # a bad project file stops us here
        run_id = "run-" + secrets.token_hex(8)
        variables = run_variables(
            spec,
            run_id=run_id,
            repo=repo.key if repo else None,
            branch=repo.branch if repo else None,
            now=self.clock(),
        )
        operator_prompt = resolve_prompt(
            spec,
            prompt,
            variables=variables,
            home=app.home,
            environ=self.environ,
            settings=settings,
            fence=_event_fence,
        )
        if spec.adapter.needs_prompt and operator_prompt is None:
            raise InvalidInput(
                "prompt",
                None,
                f"agent {agent} is a prompt one-shot: give --prompt or set prompt, prompt_file,"
                " prompt_template or prompt_template_file",
            )
        opened = app.runs.open_run(
            agent,
            workdir=spec.workdir,
            adapter=spec.adapter.name,
            run_id=run_id,
            source="supervisor",
        )
        started = self.clock()
        if spec.memory_briefing:
            briefings.warm_up(app)
        # The checkout is snapshotted while the briefing is computed; both before the spawn.
        snapshots: list[Snapshot | None] = []
        snapshotting = threading.Thread(
            target=lambda: snapshots.append(take_snapshot(repo.root) if repo else None),
            name="fleetmem-git-snapshot",
            daemon=True,
        )
        snapshotting.start()
        env = self._child_env(spec, opened)
        argv_prompt = self._with_briefing(app, spec, opened, operator_prompt, env)
        snapshotting.join()
        snapshot = snapshots[0] if snapshots else None
        argv = spec.adapter.argv(spec.executable, spec.args, spec.model, argv_prompt)
        # The run's assembled context (loads recorded), by the adapter's documented way.
        delivery = context_delivery.for_run(
            app,
            agent=spec.name,
            adapter=spec.adapter.name,
            repo=repo.key if repo else None,
            run_id=run_id,
            argv=argv,
            env=env,
            has_prompt=argv_prompt is not None,
            prompt=operator_prompt,
        )
        beats = Heartbeats(
            send=lambda files: app.runs.heartbeat(opened.token, files=files),
            root=repo.root if repo else None,
            workdir=spec.workdir,
            every_s=min(60.0, max(5.0, app.runs.expire_after_s / 4)),
        )
        try:
            spawns = self._spawn_all(
                spec, delivery.argv, delivery.env, beats, cancel or threading.Event()
            )
        finally:
            delivery.close()
            context_delivery.forget_whole(app.home, run_id)  # the parts it could pull
        del argv, argv_prompt, delivery  # the composed prompt goes nowhere else
        return self._close(spec, opened, repo, snapshot, spawns, operator_prompt, started)

    def _agent_app(self, agent: str) -> App:
        """The application bound to the agent's workspace; a ``--workspace`` naming another
        one is refused (a run always acts in its agent's workspace)."""
        workspace = self.app.agent_workspace(agent)
        if self.app.workspace not in (DEFAULT_WORKSPACE, workspace):
            raise InvalidInput(
                "--workspace",
                self.app.workspace,
                f"agent {agent} acts in workspace {workspace} ([agent.{agent}] workspace): "
                "a run always acts in its agent's workspace; drop --workspace, or bind the "
                "agent to this workspace in the configuration",
            )
        return self.app.for_agent(agent)

    def _child_env(self, spec: AgentSpec, opened: OpenedRun) -> dict[str, str]:
        env = {k: v for k, v in self.environ.items() if k != TOKEN_ENV}
        env.update(spec.env)
        env[TOKEN_ENV] = opened.token
        env["FLEETMEM_RUN_ID"] = opened.run_id
        env["FLEETMEM_HOME"] = str(self.app.home)
        return env

    # ---- the briefing -------------------------------------------------------------------
    def _with_briefing(
        self,
        app: App,
        spec: AgentSpec,
        opened: OpenedRun,
        prompt: str | None,
        env: Mapping[str, str],
    ) -> str | None:
        """The prompt for argv: the fenced briefing, a blank line and ``prompt``, or
        ``prompt`` alone (no briefing wanted, empty, or it could not be given). ``app`` is
        bound to the agent's workspace."""
        if not spec.memory_briefing:
            return prompt
        agent, run_id = spec.name, opened.run_id
        if prompt is None:
            # No prompt to prepend to: the briefing is computed at spawn all the same, for
            # the run's `briefing` tool and resource to serve (REQ-15).
            try:
                briefings.ensure_stored(app, app.runs.resolve_caller(opened.token))
            except Exception as exc:
                log.warning("briefing.failed agent=%s run=%s error=%s", agent, run_id, exc)
            return None

        def skip(reason: str) -> str:
            log.warning("briefing.skipped agent=%s run=%s reason=%s", agent, run_id, reason)
            app.briefings.count_delivery(agent, "prompt", None, reason=reason)
            return prompt

        try:
            caller = app.runs.resolve_caller(opened.token)
            stored = briefings.ensure_stored(app, caller)
            text = app.agent_memory.stored_briefing(run_id)
        except Exception as exc:
            log.debug("briefing.failed run=%s error=%s", run_id, type(exc).__name__)
            return skip("briefing_failed")
        if not stored or text is None:
            return skip("briefing_failed")
        if text.text:
            # Checked before anything is served: a briefing that cannot be given is not
            # recorded as shown.
            argv = spec.adapter.argv(
                spec.executable, spec.args, spec.model, briefings.fence(text.text, prompt)
            )
            if not briefings.fits(argv, env):
                return skip("argument_too_large")
        try:
            served = app.agent_memory.briefing(caller, delivery="prompt")
        except Exception as exc:
            log.debug("briefing.serve_failed run=%s error=%s", run_id, type(exc).__name__)
            return skip("exposure_failed")
        if not served.text:
            return prompt
        full = briefings.fence(served.text, prompt)
        log.info(
            "briefing.prepended agent=%s run=%s bytes=%d %s",
            agent,
            run_id,
            served.size_bytes,
            briefings.counts(served.text),
        )
        return full

    # ---- processes ----------------------------------------------------------------------
    def _spawn_all(
        self,
        spec: AgentSpec,
        argv: list[str],
        env: Mapping[str, str],
        beats: Heartbeats,
        cancel: threading.Event,
    ) -> list[Spawn]:
        """Start the agent, and again after a crash while ``respawns`` allow."""
        limits = Limits(spec.timeout_s, spec.kill_grace_s, cancel)
        spawns: list[Spawn] = []
        for attempt in range(spec.respawns + 1):
            spawn = run_process(
                argv,
                cwd=spec.workdir,
                env=env,
                parser=spec.adapter.parser(),
                limits=limits,
                beats=beats,
                out=self.out,
                clock=self.clock,
                name=spec.name,
            )
            spawns.append(spawn)
            end = spawn.end
            crashed = end.signal is not None and not (end.timed_out or end.cancelled)
            if not crashed or attempt == spec.respawns:
                break
            log.warning(
                "run.respawn agent=%s signal=%d attempt=%d", spec.name, end.signal, attempt + 2
            )
        return spawns

    # ---- closing ------------------------------------------------------------------------
    def _close(
        self,
        spec: AgentSpec,
        opened: OpenedRun,
        repo: Repository | None,
        snapshot: Snapshot | None,
        spawns: list[Spawn],
        prompt: str | None,
        started: float,
    ) -> RunResult:
        from_git: tuple[str, ...] = ()
        if snapshot is not None:
            from_git = tuple(os.path.join(snapshot.root, p) for p in changed_since(snapshot))
        patterns = spec.verify_patterns
        parts = [
            SessionPart(
                s.observation,
                spec.workdir,
                patterns,
                from_git if i == len(spawns) - 1 else (),
            )
            for i, s in enumerate(spawns)
        ]
        last = spawns[-1]
        checks = verifications(last.observation.commands(), patterns)
        outcome = decide_outcome(last.end, last.observation, checks)
        record = build_record(
            run_id=opened.run_id,
            agent=spec.name,
            adapter=spec.adapter.name,
            started_at=started,
            ended_at=self.clock(),
            outcome=outcome,
            parts=parts,
            spawned=any(s.end.spawn_error is None for s in spawns),
            prompt=prompt,
            configured_model=spec.model,
        )
        try:
            ingested = self.app.memory.ingest_run(record, process_now=False)
        except StoreError as exc:
            # The store refused the write (an outage): the run still ends as the agent did,
            # and its record is kept for `fleetmem runs ingest` once the store is back.
            kept = keep_unsent(self.app.home, opened.run_id, record)
            log.error("run.record_refused run=%s kept=%s error=%s", opened.run_id, kept, exc)
            return RunResult(
                run_id=opened.run_id,
                agent=spec.name,
                outcome=outcome[0],
                reason=outcome[1],
                exit_code=exit_code_for(outcome, last.end),
                episode=f"refused: store_unavailable (record kept in {kept})",
                result_text=last.observation.result_text,
            )
        log.info(
            "run.closed agent=%s run=%s outcome=%s reason=%s episode=%s",
            spec.name,
            opened.run_id,
            outcome[0],
            outcome[1],
            ingested.status,
        )
        episode = ingested.status
        if ingested.episode_id is not None:
            episode = self._record_episode(ingested.episode_id)
        return RunResult(
            run_id=opened.run_id,
            agent=spec.name,
            outcome=outcome[0],
            reason=outcome[1],
            exit_code=exit_code_for(outcome, last.end),
            episode=episode,
            result_text=last.observation.result_text,
        )

    def close_wait_s(self) -> float:
        """How long the close waits for the provider: ``provider_timeout`` for an upstream,
        ``RECORD_WAIT_S`` for the in-process built-in one."""
        if self.app.providers.configured_name == BUILTIN_PROVIDER:
            return RECORD_WAIT_S
        return self.app.settings.memory.episodes.provider_timeout_s

    def release_provider(self) -> None:
        """Close an upstream provider's session within what is left of the close budget (at
        least ``RELEASE_MIN_S``): one that hangs would otherwise hold the app's close for its
        own close timeout. What does not close by then is cancelled when the app closes.
        ``fleetmem run`` calls this before its app is closed."""
        providers = self.app.providers
        if providers.configured_name == BUILTIN_PROVIDER:
            return  # in-process: nothing to hang on
        left = RELEASE_MIN_S
        if self._close_by is not None:
            left = max(RELEASE_MIN_S, self._close_by - time.monotonic())
        try:
            # The session waits twice (stop, then its task): half the budget each.
            providers.provider(providers.configured_name).session.close(timeout=left / 2)
        except Exception as exc:  # closing never fails a run
            log.info("provider.close_failed error=%s", type(exc).__name__)

    def _record_episode(self, episode_id: str) -> str:
        """Send the episode to the provider now the run is over, waiting at most
        :meth:`close_wait_s`; what is not done by then stays queued for the daemon's retries
        (the run's outcome is already stored)."""
        wait = self.close_wait_s()
        self._close_by = time.monotonic() + wait
        done = threading.Event()

        def work() -> None:
            try:
                self.app.memory.process_jobs(episode_id=episode_id)
            except Exception as exc:
                log.warning(
                    "episode.record_deferred episode=%s error=%s", episode_id, type(exc).__name__
                )
            finally:
                done.set()

        threading.Thread(target=work, name="fleetmem-record", daemon=True).start()
        if not done.wait(wait):
            log.warning("episode.record_pending episode=%s after=%gs", episode_id, wait)
            return f"{episode_id} (pending)"
        try:
            indexed = self.app.memory.episode_index(episode_id)
        except Exception:
            indexed = []
        return episode_id if indexed else f"{episode_id} (pending)"


def _event_fence(field_name: str, value: str) -> str:
    """Fence one untrusted event field of a prompt template (SPEC-0017 REQ-10)."""
    from fleetmem.core.fence import fence_block

    field = "event-" + field_name.replace(".", "-").replace("_", "-")
    return fence_block(
        value[:4096], nonce=secrets.token_hex(16), source="fleetmem-event", field=field
    )
