"""Which git repository a directory belongs to: its root, its key and its branch.

Every session of every ingested run is attributed through :func:`resolve_repository`, so
:class:`RepositoryResolver` memoises answers per cwd for a bounded time and number of entries.
Git is run with a timeout, no stdin and no terminal prompts; any failure to run it is an
expected outcome (None), logged at debug. Remote URLs are never logged: they may hold tokens.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fleetmem.core.scope import local_repo_key, relativize, repo_key_from_remote
from fleetmem.errors import InvalidInput

logger = logging.getLogger(__name__)

GIT_TIMEOUT_SECONDS = 5.0
DEFAULT_CACHE_ENTRIES = 1024

# Variables that would make git look at a repository other than the one under ``-C``
# (set, for example, when fleetmem runs inside a git hook).
_REPOSITORY_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_GRAFT_FILE",
        "GIT_REPLACE_REF_BASE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
    }
)


@dataclass(frozen=True)
class Repository:
    """A checkout: its real top-level directory, its repository key and its branch (None if
    HEAD is detached)."""

    root: str
    key: str
    branch: str | None


class GitUnavailable(Exception):
    """Git could not be run at all (not installed, timed out, not executable)."""


def git_environment() -> dict[str, str]:
    """The environment every git call runs with: no prompts, C locale, no inherited repo."""
    env = {name: value for name, value in os.environ.items() if name not in _REPOSITORY_ENV}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"})
    return env


def run_git(directory: str, args: Sequence[str]) -> str | None:
    """Run ``git -C directory *args``; stdout (one trailing newline removed) on exit 0.

    Returns None when git exits non-zero (not a repository, key not set, detached HEAD).
    Raises :class:`GitUnavailable` when git cannot be run or exceeds ``GIT_TIMEOUT_SECONDS``.
    Output is decoded with the file system encoding so odd bytes in paths survive.
    """
    command = ["git", "-C", directory, *args]
    try:
        completed = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=git_environment(),
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitUnavailable(f"git {args[0]} timed out after {GIT_TIMEOUT_SECONDS}s") from exc
    except OSError as exc:
        raise GitUnavailable(f"git could not be run: {exc.strerror or exc}") from exc
    if completed.returncode != 0:
        logger.debug("git %s exited %d in %s", args[0], completed.returncode, directory)
        return None
    output = os.fsdecode(completed.stdout)
    return output[:-1] if output.endswith("\n") else output


def resolve_repository(cwd: str) -> Repository | None:
    """The repository ``cwd`` is in, or None (missing directory, not in a work tree, git failed).

    Symlinks in ``cwd`` are resolved first, so the root is the real top level git reports.
    The key comes from ``remote.origin.url`` when it is a usable network remote, else from
    the root (:func:`fleetmem.core.scope.local_repo_key`).
    """
    real = os.path.realpath(cwd)
    if not os.path.isdir(real):
        logger.debug("no repository: %s is not a directory", cwd)
        return None
    try:
        toplevel = run_git(real, ["rev-parse", "--show-toplevel"])
        if not toplevel:
            logger.debug("no repository: %s is not inside a git work tree", cwd)
            return None
        root = os.path.realpath(toplevel)
        remote = run_git(root, ["config", "--get", "remote.origin.url"])
        branch = run_git(root, ["symbolic-ref", "--short", "-q", "HEAD"])
    except GitUnavailable as exc:
        logger.debug("no repository for %s: %s", cwd, exc)
        return None
    key = repo_key_from_remote(remote) if remote else None
    if key is None:
        if remote:
            logger.debug(
                "origin remote of %s is not a usable network remote; using a local key", root
            )
        key = local_repo_key(root)
    return Repository(root=root, key=key, branch=branch or None)


def relative_to_repository(repo: Repository, path: str, cwd: str | None = None) -> str | None:
    """``path`` relative to ``repo.root``, resolving directory symlinks when lexical fails.

    A session whose cwd is a symlink into the checkout reports paths through that link,
    while ``repo.root`` is the real top level. The last path component is not resolved, so
    a symlinked file inside the repository keeps its own in-repository path.
    """
    lexical = relativize(path, repo.root, cwd)
    if lexical is not None:
        return lexical
    if not path or "\x00" in path or (cwd is not None and "\x00" in cwd):
        return None
    base = repo.root if cwd is None else os.path.join(repo.root, cwd)
    joined = os.path.join(base, path)
    head, tail = os.path.split(os.path.normpath(joined))
    resolved = os.path.join(os.path.realpath(head), tail)
    return relativize(resolved, repo.root)


class RepositoryResolver:
    """Thread-safe memo of :func:`resolve_repository` per cwd, bounded in size and age.

    ``ttl_seconds`` is how long an answer (including None) is trusted; ``clock`` returns
    seconds on a monotonic scale. The least recently used entry is dropped past
    ``max_entries``. Git runs outside the lock, so a slow lookup never blocks cached ones;
    two threads missing the same cwd at once may both run git, which is harmless.
    """

    def __init__(
        self,
        ttl_seconds: float,
        *,
        max_entries: int = DEFAULT_CACHE_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        resolve: Callable[[str], Repository | None] | None = None,
    ) -> None:
        if not ttl_seconds >= 0:
            raise InvalidInput("ttl_seconds", ttl_seconds, "must be zero or more")
        if max_entries < 1:
            raise InvalidInput("max_entries", max_entries, "must be at least 1")
        self._ttl = float(ttl_seconds)
        self._max_entries = max_entries
        self._clock = clock
        self._resolve = resolve
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, Repository | None]] = OrderedDict()

    def resolve(self, cwd: str) -> Repository | None:
        """The repository of ``cwd``, from the memo when younger than the TTL."""
        now = self._clock()
        with self._lock:
            entry = self._entries.get(cwd)
            if entry is not None and now - entry[0] < self._ttl:
                self._entries.move_to_end(cwd)
                return entry[1]
        resolver = self._resolve if self._resolve is not None else resolve_repository
        repository = resolver(cwd)
        with self._lock:
            self._entries[cwd] = (self._clock(), repository)
            self._entries.move_to_end(cwd)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return repository

    def forget(self, cwd: str | None = None) -> None:
        """Drop the memo for ``cwd``, or every memo when ``cwd`` is None."""
        with self._lock:
            if cwd is None:
                self._entries.clear()
            else:
                self._entries.pop(cwd, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
