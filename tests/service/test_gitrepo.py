from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from fleetmem.core.scope import local_repo_key
from fleetmem.errors import InvalidInput
from fleetmem.service import gitrepo
from fleetmem.service.gitrepo import (
    GitUnavailable,
    Repository,
    RepositoryResolver,
    git_environment,
    relative_to_repository,
    resolve_repository,
    run_git,
)

SECRET = "ghp_S3cretT0ken"


def git(cwd: Path, *args: str) -> str:
    """Run the real git for test setup, isolated from the user's configuration."""
    env = git_environment()
    env.update({"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    completed = subprocess.run(
        [
            "git",
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout.strip()


def make_repo(path: Path, *, remote: str | None = None, commit: bool = True) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    if remote is not None:
        git(path, "remote", "add", "origin", remote)
    if commit:
        (path / "README.md").write_text("hello\n")
        (path / "src").mkdir()
        (path / "src" / "app.py").write_text("print('hi')\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "first")
    return path


@pytest.fixture(autouse=True)
def _ceiling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Keep git from finding a repository above tmp_path, whatever the machine looks like.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Record every git invocation made through gitrepo.run_git (still running real git)."""
    calls: list[tuple[str, ...]] = []
    real = gitrepo.run_git

    def counting(directory: str, args: Sequence[str]) -> str | None:
        calls.append((directory, *args))
        return real(directory, args)

    monkeypatch.setattr(gitrepo, "run_git", counting)
    return calls


@pytest.fixture
def fake_git_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """Put a fixture executable named git first on PATH; returns a writer for its body."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()

    def install(body: str) -> Path:
        script = bin_dir / "git"
        script.write_text("#!/bin/sh\n" + body)
        script.chmod(0o755)
        return script

    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return install


# --- resolving real repositories ---------------------------------------------------------


def test_repository_with_https_remote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api.git")
    assert resolve_repository(str(repo)) == Repository(
        root=os.path.realpath(repo), key="github.com/acme/api", branch="main"
    )


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:acme/api.git",
        "ssh://git@github.com:2222/acme/api.git",
        f"https://x-access-token:{SECRET}@github.com/acme/api",
        "https://GitHub.com:443/acme/api/",
    ],
)
def test_remote_forms_give_the_same_key(tmp_path: Path, remote: str) -> None:
    repo = make_repo(tmp_path / "api", remote=remote)
    resolved = resolve_repository(str(repo))
    assert resolved is not None
    assert resolved.key == "github.com/acme/api"


def test_credentials_in_remote_are_not_logged_or_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="fleetmem.service.gitrepo")
    good = make_repo(tmp_path / "good", remote=f"https://bot:{SECRET}@github.com/acme/api.git")
    # An unusable remote (dot segment) is logged as such and falls back to a local key.
    bad = make_repo(tmp_path / "bad", remote=f"https://bot:{SECRET}@github.com/acme/../api")
    resolved_good = resolve_repository(str(good))
    resolved_bad = resolve_repository(str(bad))
    assert resolved_good is not None and resolved_bad is not None
    assert resolved_bad.key == local_repo_key(os.path.realpath(bad))
    assert "not a usable network remote" in caplog.text
    assert SECRET not in caplog.text
    assert SECRET not in repr(resolved_good) + repr(resolved_bad)


def test_nested_group_remote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", remote="git@gitlab.com:group/sub/repo.git")
    resolved = resolve_repository(str(repo))
    assert resolved is not None and resolved.key == "gitlab.com/group/sub/repo"


def test_subdirectory_cwd_resolves_to_the_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    deep = repo / "src" / "pkg" / "inner"
    deep.mkdir(parents=True)
    resolved = resolve_repository(str(deep))
    assert resolved is not None
    assert resolved.root == os.path.realpath(repo)
    assert resolved.key == "github.com/acme/api"


def test_branch_checkout(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    git(repo, "checkout", "-q", "-b", "feature/login")
    resolved = resolve_repository(str(repo))
    assert resolved is not None and resolved.branch == "feature/login"


def test_detached_head_has_no_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    git(repo, "checkout", "-q", "--detach")
    resolved = resolve_repository(str(repo))
    assert resolved is not None
    assert resolved.branch is None
    assert resolved.key == "github.com/acme/api"


def test_repository_without_commits_still_has_its_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "fresh", commit=False)
    resolved = resolve_repository(str(repo))
    assert resolved is not None and resolved.branch == "main"


def test_no_remote_gives_a_local_key(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "my project")
    resolved = resolve_repository(str(repo / "src"))
    assert resolved is not None
    assert resolved.key == local_repo_key(os.path.realpath(repo))
    assert resolved.key.startswith("local/my-project-")


def test_local_path_remote_gives_a_local_key(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream.git"
    upstream.mkdir()
    git(upstream, "init", "-q", "--bare")
    repo = make_repo(tmp_path / "api", remote=str(upstream))
    resolved = resolve_repository(str(repo))
    assert resolved is not None
    assert resolved.key == local_repo_key(os.path.realpath(repo))


def test_other_remote_than_origin_is_ignored(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api")
    git(repo, "remote", "add", "upstream", "https://github.com/acme/api")
    resolved = resolve_repository(str(repo))
    assert resolved is not None and resolved.key.startswith("local/api-")


def test_symlinked_cwd_resolves_to_the_real_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "real" / "api", remote="https://github.com/acme/api")
    link_to_root = tmp_path / "link-root"
    link_to_root.symlink_to(repo)
    link_to_sub = tmp_path / "link-sub"
    link_to_sub.symlink_to(repo / "src")
    expected = Repository(os.path.realpath(repo), "github.com/acme/api", "main")
    assert resolve_repository(str(link_to_root)) == expected
    assert resolve_repository(str(link_to_sub)) == expected
    assert resolve_repository(str(link_to_root / "src")) == expected


def test_symlinked_repository_without_remote_keys_by_real_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "real" / "api")
    link = tmp_path / "alias"
    link.symlink_to(repo)
    via_link = resolve_repository(str(link))
    direct = resolve_repository(str(repo))
    assert via_link is not None and via_link == direct
    assert via_link.key == local_repo_key(os.path.realpath(repo))


def test_directory_outside_any_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert resolve_repository(str(plain)) is None


def test_missing_directory_does_not_run_git(
    tmp_path: Path, git_calls: list[tuple[str, ...]]
) -> None:
    assert resolve_repository(str(tmp_path / "gone")) is None
    assert resolve_repository(str(tmp_path / "file.txt")) is None
    assert git_calls == []


def test_a_file_is_not_a_cwd(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api")
    assert resolve_repository(str(repo / "README.md")) is None


def test_git_directory_and_bare_repository_are_not_work_trees(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api")
    assert resolve_repository(str(repo / ".git")) is None
    bare = tmp_path / "bare.git"
    bare.mkdir()
    git(bare, "init", "-q", "--bare")
    assert resolve_repository(str(bare)) is None


def test_inherited_git_dir_does_not_redirect_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other", remote="https://github.com/acme/other")
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    resolved = resolve_repository(str(repo))
    assert resolved is not None and resolved.key == "github.com/acme/api"


def test_nested_repository_wins_over_outer(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer", remote="https://github.com/acme/outer")
    inner = make_repo(outer / "vendor" / "inner", remote="https://github.com/acme/inner")
    resolved = resolve_repository(str(inner / "src"))
    assert resolved is not None
    assert resolved.key == "github.com/acme/inner"
    assert resolved.root == os.path.realpath(inner)


# --- running git -------------------------------------------------------------------------


def test_run_git_returns_stdout_or_none(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api")
    assert run_git(str(repo), ["rev-parse", "--show-toplevel"]) == os.path.realpath(repo)
    assert run_git(str(repo), ["config", "--get", "remote.origin.url"]) is None


def test_git_runs_without_stdin_prompts_or_foreign_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_git_dir: Callable[[str], Path]
) -> None:
    record = tmp_path / "record"
    fake_git_dir(
        f'env > "{record}.env"\n'
        f'readlink /proc/self/fd/0 > "{record}.stdin"\n'
        f'echo "$@" > "{record}.args"\n'
        "echo fake-output\n"
    )
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "1")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    # Give this process a live stdin (a pipe) so that inheriting it would be visible.
    read_end, write_end = os.pipe()
    saved_stdin = os.dup(0)
    os.dup2(read_end, 0)
    try:
        assert run_git(str(tmp_path), ["rev-parse", "--show-toplevel"]) == "fake-output"
    finally:
        os.dup2(saved_stdin, 0)
        for fd in (saved_stdin, read_end, write_end):
            os.close(fd)
    env = dict(
        line.split("=", 1) for line in Path(f"{record}.env").read_text().splitlines() if "=" in line
    )
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["LC_ALL"] == "C"
    assert "GIT_DIR" not in env
    assert Path(f"{record}.stdin").read_text().strip() == "/dev/null"
    assert Path(f"{record}.args").read_text().split() == [
        "-C",
        str(tmp_path),
        "rev-parse",
        "--show-toplevel",
    ]


def test_git_timeout_gives_none(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_git_dir: Callable[[str], Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="fleetmem.service.gitrepo")
    fake_git_dir("exec sleep 30\n")
    monkeypatch.setattr(gitrepo, "GIT_TIMEOUT_SECONDS", 0.3)
    started = time.monotonic()
    assert resolve_repository(str(tmp_path)) is None
    assert time.monotonic() - started < 10
    assert "timed out" in caplog.text
    with pytest.raises(GitUnavailable):
        run_git(str(tmp_path), ["rev-parse", "--show-toplevel"])


def test_git_missing_gives_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    caplog.set_level(logging.DEBUG, logger="fleetmem.service.gitrepo")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert resolve_repository(str(repo)) is None
    assert "git could not be run" in caplog.text


def test_git_failing_after_toplevel_gives_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    real = gitrepo.run_git

    def flaky(directory: str, args: Sequence[str]) -> str | None:
        if args[0] == "config":
            raise GitUnavailable("simulated timeout")
        return real(directory, args)

    monkeypatch.setattr(gitrepo, "run_git", flaky)
    assert resolve_repository(str(repo)) is None


# --- paths through symlinks ----------------------------------------------------------------


def test_relative_to_repository_through_a_symlinked_cwd(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "real" / "api")
    link = tmp_path / "alias"
    link.symlink_to(repo)
    resolved = resolve_repository(str(link / "src"))
    assert resolved is not None
    assert relative_to_repository(resolved, "app.py", str(link / "src")) == "src/app.py"
    assert relative_to_repository(resolved, str(link / "src" / "app.py")) == "src/app.py"
    assert relative_to_repository(resolved, str(repo / "README.md")) == "README.md"
    assert relative_to_repository(resolved, "src/app.py") == "src/app.py"
    assert relative_to_repository(resolved, "../../outside.txt", str(link)) is None
    assert relative_to_repository(resolved, str(tmp_path / "elsewhere.txt")) is None
    assert relative_to_repository(resolved, str(link)) is None
    assert relative_to_repository(resolved, "a\x00b", str(link)) is None


def test_symlinked_file_keeps_its_in_repository_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "api")
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    (repo / "linked.txt").symlink_to(outside)
    resolved = resolve_repository(str(repo))
    assert resolved is not None
    assert relative_to_repository(resolved, str(repo / "linked.txt")) == "linked.txt"


# --- the resolver cache ----------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_second_resolve_does_not_run_git(
    tmp_path: Path, git_calls: list[tuple[str, ...]], clock: FakeClock
) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    resolver = RepositoryResolver(60, clock=clock)
    first = resolver.resolve(str(repo))
    calls_after_first = len(git_calls)
    assert calls_after_first == 3
    clock.now += 59
    assert resolver.resolve(str(repo)) == first
    assert len(git_calls) == calls_after_first
    assert first is not None and first.key == "github.com/acme/api"


def test_cache_expires_after_ttl(
    tmp_path: Path, git_calls: list[tuple[str, ...]], clock: FakeClock
) -> None:
    repo = make_repo(tmp_path / "api", remote="https://github.com/acme/api")
    resolver = RepositoryResolver(60, clock=clock)
    assert resolver.resolve(str(repo)) is not None
    git(repo, "checkout", "-q", "-b", "next")
    clock.now += 30
    cached = resolver.resolve(str(repo))
    assert cached is not None and cached.branch == "main"
    clock.now += 31
    fresh = resolver.resolve(str(repo))
    assert fresh is not None and fresh.branch == "next"
    assert len(git_calls) == 6


def test_negative_answers_are_cached_too(
    tmp_path: Path, git_calls: list[tuple[str, ...]], clock: FakeClock
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    resolver = RepositoryResolver(60, clock=clock)
    assert resolver.resolve(str(plain)) is None
    assert resolver.resolve(str(plain)) is None
    assert len(git_calls) == 1


def test_cache_is_bounded_least_recently_used_first(clock: FakeClock) -> None:
    looked_up: list[str] = []

    def resolve(cwd: str) -> Repository | None:
        looked_up.append(cwd)
        return Repository(root=cwd, key=f"local/{cwd.strip('/')}-00000000", branch=None)

    resolver = RepositoryResolver(60, max_entries=2, clock=clock, resolve=resolve)
    resolver.resolve("/a")
    resolver.resolve("/b")
    resolver.resolve("/a")  # /a is now the most recently used
    resolver.resolve("/c")  # evicts /b
    assert len(resolver) == 2
    resolver.resolve("/a")
    resolver.resolve("/c")
    assert looked_up == ["/a", "/b", "/c"]
    resolver.resolve("/b")
    assert looked_up == ["/a", "/b", "/c", "/b"]


def test_forget_drops_entries(clock: FakeClock) -> None:
    looked_up: list[str] = []

    def resolve(cwd: str) -> Repository | None:
        looked_up.append(cwd)
        return None

    resolver = RepositoryResolver(60, clock=clock, resolve=resolve)
    resolver.resolve("/a")
    resolver.resolve("/b")
    resolver.forget("/a")
    resolver.resolve("/a")
    resolver.resolve("/b")
    assert looked_up == ["/a", "/b", "/a"]
    resolver.forget()
    assert len(resolver) == 0
    resolver.resolve("/b")
    assert looked_up[-1] == "/b"


def test_zero_ttl_never_serves_from_cache(clock: FakeClock) -> None:
    looked_up: list[str] = []

    def resolve(cwd: str) -> Repository | None:
        looked_up.append(cwd)
        return None

    resolver = RepositoryResolver(0, clock=clock, resolve=resolve)
    resolver.resolve("/a")
    resolver.resolve("/a")
    assert looked_up == ["/a", "/a"]


def test_default_resolver_uses_module_resolve_and_monotonic_clock(
    tmp_path: Path, git_calls: list[tuple[str, ...]]
) -> None:
    repo = make_repo(tmp_path / "api")
    resolver = RepositoryResolver(300)
    assert resolver.resolve(str(repo)) == resolver.resolve(str(repo))
    assert len(git_calls) == 3


@pytest.mark.parametrize(("ttl", "entries"), [(-1, 10), (float("nan"), 10), (10, 0)])
def test_resolver_rejects_bad_bounds(ttl: float, entries: int) -> None:
    with pytest.raises(InvalidInput):
        RepositoryResolver(ttl, max_entries=entries)


def test_resolver_is_thread_safe(clock: FakeClock) -> None:
    lock = threading.Lock()
    counts: dict[str, int] = {}

    def resolve(cwd: str) -> Repository | None:
        with lock:
            counts[cwd] = counts.get(cwd, 0) + 1
        time.sleep(0.001)
        return Repository(root=cwd, key="github.com/acme/api", branch=cwd)

    resolver = RepositoryResolver(3600, max_entries=8, clock=clock, resolve=resolve)
    cwds = [f"/w/{i}" for i in range(16)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(offset: int) -> None:
        try:
            barrier.wait()
            for step in range(200):
                cwd = cwds[(offset + step) % len(cwds)]
                got = resolver.resolve(cwd)
                assert got is not None and got.branch == cwd
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(resolver) <= 8
