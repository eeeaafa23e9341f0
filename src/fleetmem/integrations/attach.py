"""Attributing the ``fleetmem mcp`` that Claude Code starts itself to its session's run.

Claude Code starts the MCP servers of its settings as its own child processes, with no
session id and none of the variables a SessionStart hook exports through ``$CLAUDE_ENV_FILE``
(those reach only its Bash tool), so such a ``fleetmem mcp`` cannot be given
``FLEETMEM_RUN_TOKEN``. What the server and the hooks do share is their parent: hooks run as
``/bin/sh -c COMMAND`` children of the Claude Code process, stdio MCP servers as its direct
children. So:

* the SessionStart hook records ``{session, run, token}`` under the identity of the Claude
  Code process (its parent, looking through a ``sh -c`` wrapper) in a 0600 file under
  ``$FLEETMEM_HOME/hooks/claude-code/owners/``;
* ``fleetmem mcp --attach claude-code`` works out the same identity from its own parent and
  reads that file at every call, so it is attributed whether it started before or after the
  hook, and follows ``/clear`` (a new session, hence a new run, in the same process).

A process identity is its pid *and* its start time, so a recycled pid never inherits a
session. Entries go away with their session (SessionEnd) or, when Claude Code died without
one, once their process is gone (pruned whenever a session is recorded). Two Claude Code
processes never share an identity, so sessions are never attributed across each other.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("fleetmem.attach")

OWNERS_DIR = ("hooks", "claude-code", "owners")
#: Processes that only wrap a command line (``sh -c '...'``) and are looked through.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish"})
#: How many wrappers are looked through at most (``sh -c "bash -c ..."``).
MAX_WRAPPERS = 3
INTEGRATIONS = ("claude-code", "codex")


@dataclass(frozen=True, slots=True)
class ProcessId:
    """One process, for as long as it lives: its pid and its start time."""

    pid: int
    started: str

    @property
    def key(self) -> str:
        return f"{self.pid}-{''.join(c for c in self.started if c.isalnum())}"


@dataclass(frozen=True, slots=True)
class _Info:
    ppid: int
    started: str
    name: str
    argv: tuple[str, ...]


def _linux_info(pid: int) -> _Info | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        raw_argv = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    # The name is in parentheses and may itself hold spaces or parentheses.
    head, _, tail = stat.rpartition(")")
    fields = tail.split()
    if len(fields) < 20:
        return None
    argv = tuple(a.decode("utf-8", "replace") for a in raw_argv.split(b"\0") if a)
    return _Info(int(fields[1]), fields[19], head.partition("(")[2], argv)


def _ps_info(pid: int) -> _Info | None:
    """The same facts from ``ps`` where there is no ``/proc`` (macOS, the BSDs)."""
    try:
        out = subprocess.run(
            ["ps", "-o", "ppid=", "-o", "lstart=", "-o", "args=", "-p", str(pid)],
            capture_output=True, text=True, timeout=5, check=False,
        ).stdout.split()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if len(out) < 7 or not out[0].isdigit():
        return None
    argv = tuple(out[6:])
    return _Info(int(out[0]), " ".join(out[1:6]), os.path.basename(argv[0]), argv)


def process_info(pid: int) -> _Info | None:
    """Parent, start time, name and command line of ``pid``; None when it is gone."""
    return _linux_info(pid) if sys.platform.startswith("linux") else _ps_info(pid)


def _is_wrapper(info: _Info) -> bool:
    """A shell running one command line (``sh -c ...``), not an interactive shell."""
    name = os.path.basename(info.name).lstrip("-")
    if name not in SHELLS:
        return False
    return any(a.startswith("-") and not a.startswith("--") and "c" in a for a in info.argv[1:])


def session_owner(pid: int | None = None) -> ProcessId | None:
    """The process that started ``pid`` (default: this one), looking through ``sh -c``
    wrappers; None when it cannot be told (no parent left, or init adopted us)."""
    info = process_info(os.getpid() if pid is None else pid)
    if info is None:
        return None
    parent = info.ppid
    for _ in range(MAX_WRAPPERS + 1):
        if parent <= 1:
            return None
        found = process_info(parent)
        if found is None:
            return None
        if not _is_wrapper(found):
            return ProcessId(parent, found.started)
        parent = found.ppid
    return None


def is_alive(owner: ProcessId) -> bool:
    info = process_info(owner.pid)
    return info is not None and info.started == owner.started


@dataclass(frozen=True, slots=True)
class Attachment:
    """The session (and its run) a Claude Code process is in now."""

    session_id: str
    run_id: str
    token: str
    agent: str
    at: float


class Owners:
    """The owner files under one fleetmem home."""

    def __init__(self, home: Path) -> None:
        self.directory = home.joinpath(*OWNERS_DIR)

    def _path(self, owner: ProcessId) -> Path:
        return self.directory / f"{owner.key}.json"

    def record(self, owner: ProcessId, attachment: Attachment) -> None:
        """``owner`` is in ``attachment``'s session from now on (the latest one wins)."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self._path(owner)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "pid": owner.pid,
                    "started": owner.started,
                    "session_id": attachment.session_id,
                    "run_id": attachment.run_id,
                    "token": attachment.token,
                    "agent": attachment.agent,
                    "at": attachment.at,
                },
                fh,
            )
        os.replace(tmp, path)
        self.prune()

    def find(self, owner: ProcessId) -> Attachment | None:
        try:
            data = json.loads(self._path(owner).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("pid") != owner.pid:
            return None
        if data.get("started") != owner.started:
            return None
        try:
            return Attachment(
                session_id=str(data["session_id"]),
                run_id=str(data["run_id"]),
                token=str(data["token"]),
                agent=str(data["agent"]),
                at=float(data["at"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def forget_session(self, session_id: str) -> int:
        """Remove every entry still naming ``session_id`` (its session ended)."""
        gone = 0
        for path, data in self._entries():
            if data.get("session_id") == session_id:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    gone += 1
        return gone

    def prune(self) -> int:
        """Remove the entries of processes that are gone (Claude Code died mid-session)."""
        gone = 0
        for path, data in self._entries():
            pid, started = data.get("pid"), data.get("started")
            known = isinstance(pid, int) and isinstance(started, str)
            if known and is_alive(ProcessId(int(str(pid)), str(started))):
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                gone += 1
        return gone

    def _entries(self) -> list[tuple[Path, dict[str, object]]]:
        out: list[tuple[Path, dict[str, object]]] = []
        try:
            paths = sorted(self.directory.glob("*.json"))
        except OSError:
            return out
        for path in paths:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                out.append((path, data))
        return out


def attach_session(
    home: Path, *, session_id: str, run_id: str, token: str, agent: str, owner: ProcessId | None
) -> bool:
    """Record the session of a hook's Claude Code process; False when it has none."""
    if owner is None:
        log.info("attach.no_owner run=%s", run_id)
        return False
    Owners(home).record(
        owner,
        Attachment(session_id=session_id, run_id=run_id, token=token, agent=agent, at=time.time()),
    )
    log.info("attach.recorded run=%s owner=%d", run_id, owner.pid)
    return True


class AttachedToken:
    """The run token of ``fleetmem mcp --attach claude-code``: looked up at every call from
    the session its parent process is in now (None until a SessionStart hook records one)."""

    def __init__(self, home: Path, owner: ProcessId | None) -> None:
        self.owners = Owners(home)
        self.owner = owner

    def current(self) -> str | None:
        if self.owner is None:
            return None
        found = self.owners.find(self.owner)
        return found.token if found is not None else None
