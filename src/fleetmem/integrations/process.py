"""One agent process, supervised: started, read, heartbeated, stopped, reaped.

The process runs in its own process group (so a timeout or an interrupt stops whatever it
started too), with stdin closed and stdout piped into the adapter's parser on a reader
thread; stderr is left to the operator's terminal. Stopping is SIGTERM to the group, then
SIGKILL after the grace period; once the process is gone, anything it left running in its
group is killed as well (it would otherwise hold the pipe open).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from fleetmem.integrations.adapters.base import Observation, StreamParser
from fleetmem.integrations.records import ProcessEnd

log = logging.getLogger("fleetmem.supervisor")

POLL_S = 0.2
READER_JOIN_S = 5.0
#: While edits stream in, at most one heartbeat this often.
MIN_BEAT_S = 2.0
MAX_FILES_PER_BEAT = 100


@dataclass
class Spawn:
    """One process of a run: what its stream said, how it ended, and when."""

    observation: Observation
    end: ProcessEnd
    started: float
    ended: float


@dataclass
class Heartbeats:
    """Heartbeats of one run: at least every ``every_s``, sooner when files were edited.

    ``send(files)`` delivers one (``RunsService.heartbeat`` with the run's token); only files
    inside the checkout ``root`` are reported, as absolute paths.
    """

    send: Callable[[list[str]], object]
    root: str | None
    workdir: str
    every_s: float
    last: float = 0.0
    pending: list[str] = field(default_factory=list)

    def beat(self, observation: Observation, *, force: bool = False) -> None:
        """Heartbeat if one is due; never raises (a lost heartbeat never fails the run)."""
        for path in observation.new_edit_paths():
            absolute = os.path.normpath(
                path if os.path.isabs(path) else os.path.join(self.workdir, path)
            )
            if self.root is not None and absolute.startswith(self.root.rstrip("/") + "/"):
                self.pending.append(absolute)
        now = time.monotonic()
        if not (force or self.pending or now - self.last >= self.every_s):
            return
        if not force and now - self.last < MIN_BEAT_S:
            return
        self.last = now
        files = self.pending[:MAX_FILES_PER_BEAT]
        self.pending = self.pending[MAX_FILES_PER_BEAT:]
        try:
            self.send(files)
        except Exception as exc:
            log.debug("run.heartbeat_failed error=%s", type(exc).__name__)


@dataclass
class Limits:
    """When to stop a process: a deadline (seconds from its start), an interrupt, and the
    grace between SIGTERM and SIGKILL."""

    timeout_s: float | None
    kill_grace_s: float
    cancel: threading.Event


def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    parser: StreamParser,
    limits: Limits,
    beats: Heartbeats,
    out: IO[str] | None,
    clock: Callable[[], float] = time.time,
    name: str = "agent",
) -> Spawn:
    """Start ``argv`` and supervise it to its end."""
    started = clock()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        log.warning("run.spawn_failed agent=%s error=%s", name, exc.strerror or exc)
        end = ProcessEnd(spawn_error=str(exc.strerror or exc))
        return Spawn(parser.observation, end, started, clock())
    log.info("run.spawned agent=%s pid=%d", name, proc.pid)
    reader = threading.Thread(
        target=_pump, args=(proc, parser, out), name="fleetmem-agent-stdout", daemon=True
    )
    reader.start()
    timed_out = cancelled = False
    deadline = None if limits.timeout_s is None else time.monotonic() + limits.timeout_s
    try:
        while True:
            try:
                proc.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            if limits.cancel.is_set():
                cancelled = True
                _stop(proc, limits.kill_grace_s)
                break
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                _stop(proc, limits.kill_grace_s)
                break
            beats.beat(parser.observation)
    finally:
        _reap_group(proc)
        reader.join(READER_JOIN_S)
        if proc.stdout is not None:
            proc.stdout.close()
    beats.beat(parser.observation, force=True)
    end = ProcessEnd(returncode=proc.returncode, timed_out=timed_out, cancelled=cancelled)
    log.info("run.exited agent=%s status=%s", name, proc.returncode)
    return Spawn(parser.observation, end, started, clock())


def _pump(proc: subprocess.Popen[bytes], parser: StreamParser, out: IO[str] | None) -> None:
    assert proc.stdout is not None
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            try:
                shown = parser.feed(line)
            except Exception as exc:  # a parser bug must not stop the agent's output
                log.debug("stream.parse_failed error=%s", type(exc).__name__)
                continue
            if shown is not None and out is not None:
                out.write(shown + "\n")
                out.flush()
    except (OSError, ValueError):
        pass  # the pipe was closed under us
    finally:
        try:
            parser.finish()
        except Exception as exc:
            log.debug("stream.finish_failed error=%s", type(exc).__name__)


def _stop(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM to the agent's process group, then SIGKILL after ``grace_s``."""
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()


def _reap_group(proc: subprocess.Popen[bytes]) -> None:
    """Make sure the agent is gone, and with it whatever it left running in its group."""
    if proc.poll() is None:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
    _signal_group(proc, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
