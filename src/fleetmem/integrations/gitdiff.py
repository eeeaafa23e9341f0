"""Edits from git: which files of a checkout changed between a run's start and its end.

An agent's stream reports the edits its tools made; an edit made any other way (``sed -i`` in
a shell, a code generator, a formatter) shows up only in the working tree. So the supervisor
snapshots the working tree when the run starts and again when it ends, and the files that
differ are edits too (``git diff --name-only`` between the two snapshots).

A snapshot is a git tree object of the whole working tree, tracked and untracked files alike
(``.gitignore`` respected), written through a scratch copy of the index: the checkout, its
index, HEAD and refs are never touched; only blob and tree objects are added to the object
store, where ``git gc`` prunes them in time. Committing, staging or stashing during the run
changes nothing here: the trees compare file contents.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from fleetmem.service.gitrepo import git_environment

log = logging.getLogger("fleetmem.integrations.git")

SNAPSHOT_TIMEOUT_S = 30.0
MAX_CHANGED = 1000


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The working tree of ``root`` as one tree object."""

    root: str
    tree: str


def _git(root: str, args: list[str], env: dict[str, str] | None = None) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", root, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=env or git_environment(),
            timeout=SNAPSHOT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("git %s failed in %s: %s", args[0], root, exc)
        return None
    if done.returncode != 0:
        log.debug("git %s exited %d in %s", args[0], done.returncode, root)
        return None
    return os.fsdecode(done.stdout)


def take_snapshot(root: str) -> Snapshot | None:
    """The current working tree of the checkout at ``root``; None when git cannot tell."""
    index = _git(root, ["rev-parse", "--git-path", "index"])
    if index is None:
        return None
    index_path = os.path.join(root, index.strip())
    with tempfile.TemporaryDirectory(prefix="fleetmem-git-") as scratch:
        scratch_index = os.path.join(scratch, "index")
        if os.path.isfile(index_path):
            # Starting from the real index lets git skip hashing files whose stat is unchanged.
            shutil.copyfile(index_path, scratch_index)
        env = {**git_environment(), "GIT_INDEX_FILE": scratch_index}
        if _git(root, ["add", "--all", "--", "."], env) is None:
            return None
        tree = _git(root, ["write-tree"], env)
    if tree is None or not tree.strip():
        return None
    return Snapshot(root=root, tree=tree.strip())


def changed_between(before: Snapshot, after: Snapshot) -> list[str]:
    """Repository-relative paths whose content differs between two snapshots (at most 1,000)."""
    out = _git(before.root, ["diff", "--name-only", "--no-renames", "-z", before.tree, after.tree])
    if not out:
        return []
    return [p for p in out.split("\x00") if p][:MAX_CHANGED]


def changed_since(before: Snapshot) -> list[str]:
    """Paths changed in the working tree since ``before`` was taken."""
    after = take_snapshot(before.root)
    return [] if after is None else changed_between(before, after)
