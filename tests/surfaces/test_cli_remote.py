"""``fleetmem --server URL``: the CLI acting through a real ``fleetmem serve`` subprocess.

Every comparison runs the same command twice against the same home: once through the daemon
(``--server``) and once on the local store, and asserts both print the same thing (text and
``--json``) and exit with the same code. Commands that change state are compared on their
repeat (the second ``pin``, ``forget``, ``ingest`` ...), which must also agree; volatile
timestamps are the only thing normalized.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for
from tests.surfaces.test_http import Daemon, free_port

VECTORS_OFF = '[model_api]\nembedding_model = ""\n'
REPO = "github.com/acme/api"
STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ][\d:.]+(Z|[+-]\d\d:\d\d)?")
#: When each process last probed its provider (the daemon's probe is older than a fresh CLI's).
CHECKED_AT = re.compile(r'"checked_at": [\d.]+')
#: A context's fence carries a fresh random nonce each time it is assembled.
NONCE = re.compile(r'id=\\?"\d+\\?"')


def fm(
    home: Path, *args: str, server: str | None = None, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``fleetmem [--server URL] ARGS`` as a subprocess over ``home``."""
    head = ["--server", server] if server is not None else []
    return subprocess.run(
        [FLEETMEM, *head, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env_for(home, **env),
        timeout=120,
    )


def calm(text: str) -> str:
    """Timestamps written a second apart are the same moment for these comparisons."""
    text = CHECKED_AT.sub('"checked_at": <time>', STAMP.sub("<time>", text))
    return NONCE.sub("id=<nonce>", text)


class Pair:
    """Runs a command through the daemon and locally and compares what each printed."""

    def __init__(self, daemon: Daemon) -> None:
        self.home, self.url = daemon.home, daemon.url

    def remote(self, *args: str) -> subprocess.CompletedProcess[str]:
        return fm(self.home, *args, server=self.url)

    def local(self, *args: str) -> subprocess.CompletedProcess[str]:
        return fm(self.home, *args)

    def same(self, *args: str, normalize: bool = False, code: int = 0) -> str:
        """Both ways, text and ``--json``: same stdout, stderr and exit code; remote stdout."""
        remote_out = ""
        for variant in (args, (*args, "--json")):
            remote, local = self.remote(*variant), self.local(*variant)
            assert remote.returncode == local.returncode == code, (variant, remote, local)
            fix = calm if normalize else str
            assert fix(remote.stdout) == fix(local.stdout), variant
            assert fix(remote.stderr) == fix(local.stderr), variant
            remote_out = remote_out or remote.stdout
        return remote_out

    def change(self, args: tuple[str, ...], *, undo: tuple[str, ...]) -> str:
        """A state change: through the daemon, undone locally, then made locally; both
        printed the same (timestamps aside). Ends with the change made; remote stdout."""
        remote_out = ""
        for extra in ((), ("--json",)):
            if extra:
                assert self.local(*undo).returncode == 0
            remote = self.remote(*args, *extra)
            assert self.local(*undo).returncode == 0
            local = self.local(*args, *extra)
            assert remote.returncode == local.returncode == 0, (args, remote, local)
            assert calm(remote.stdout) == calm(local.stdout), (args, extra)
            remote_out = remote_out or remote.stdout
        return remote_out


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = tmp_path_factory.mktemp("remote") / "fleetmem-home"
    home.mkdir()
    write_config(home, VECTORS_OFF)
    d = Daemon(home)
    yield d
    d.stop()


@pytest.fixture(scope="module")
def pair(daemon: Daemon) -> Pair:
    return Pair(daemon)


def _fact_id(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["fact"]["id"])


def test_memory_status_episodes_and_forget(pair: Pair) -> None:
    first = pair.remote("runs", "ingest", str(EXAMPLE), "--json")
    assert first.returncode == 0, first.stderr
    episode = json.loads(first.stdout)["episode_id"]
    assert episode
    pair.same("runs", "ingest", str(EXAMPLE))  # the repeat: a duplicate, both ways
    pair.same("status", normalize=True)
    listed = pair.same("episodes", "--since", "3650d")
    assert episode in listed
    pair.same("episodes", "--agent", "api-fixer", "--repo", REPO, "--limit", "5")
    pair.same("episodes", "show", episode)
    pair.same("runs", "list")
    pair.same("runs", "show", "run-2026-11-28-0042")
    forgot = pair.remote("forget", episode)
    assert forgot.returncode == 0 and forgot.stdout.startswith(f"forgot {episode}")
    assert "(already forgotten)" in pair.same("forget", episode)
    pair.same("episodes", "show", episode, code=3)  # a forgotten episode: not found, both ways


def _new_fact(pair: Pair, text: str) -> str:
    return _fact_id(pair.remote("facts", "add", text, "--json"))


def test_facts_add_list_search_show(pair: Pair) -> None:
    added = pair.remote("facts", "add", "we never deploy on Fridays", "--key", "k1", "--json")
    fact = _fact_id(added)
    assert json.loads(added.stdout)["created"] is True
    repeat = pair.same("facts", "add", "we never deploy on Fridays", "--key", "k1")
    assert repeat.startswith(f"Already remembered (same key) {fact}")
    pair.same("facts", "list", "--status", "all", "--limit", "5")
    pair.same("facts", "search", "deploy Fridays")
    pair.same("facts", "show", fact)


def test_facts_edit_pin_unpin(pair: Pair) -> None:
    fact = _new_fact(pair, "migrations run before the deploy")
    edited = pair.remote("facts", "edit", fact, "migrations always run before the deploy")
    assert edited.returncode == 0 and f"Saved {fact} revision 2" in edited.stdout
    pair.same("facts", "edit", fact, "migrations always run before the deploy")  # unchanged
    pinned = pair.change(("facts", "pin", fact), undo=("facts", "unpin", fact))
    assert pinned == f"{fact} is pinned\n"
    pair.change(("facts", "unpin", fact), undo=("facts", "pin", fact))
    # The scope too ("Limit to one agent…"), through the daemon as locally.
    scoped = pair.change(
        ("facts", "edit", fact, "--scope", "agent:coder"),
        undo=("facts", "edit", fact, "--scope", "workspace"),
    )
    assert scoped == f"{fact} is now for only coder.\n"
    assert '"scope": "agent:coder"' in pair.local("facts", "show", fact, "--json").stdout
    both = pair.remote("facts", "edit", fact, "migrations run first", "--scope", "workspace")
    assert both.stdout.splitlines()[1:] == [f"{fact} is now for every agent."], both.stdout
    neither = pair.same("facts", "edit", fact, code=2)
    assert neither == ""


def test_facts_forget_restore_review_history_votes(pair: Pair) -> None:
    fact = _new_fact(pair, "the billing service owns invoices")
    forgot = pair.change(("facts", "forget", fact), undo=("facts", "restore", fact))
    assert forgot.startswith(f"Forgot {fact}. Undo: fleetmem facts restore {fact}")
    restored = pair.change(("facts", "restore", fact), undo=("facts", "forget", fact))
    assert restored == f"Restored {fact} (active)\n"
    stale = pair.remote("facts", "review", fact, "stale")
    assert stale.returncode == 0 and stale.stdout == f"{fact} is now stale\n"
    pair.same("facts", "history", fact)
    pair.same("facts", "votes", fact)
    pair.same("facts", "trace", "run-2026-11-28-0042")


def test_facts_forget_all_preview_and_confirm(pair: Pair) -> None:
    assert pair.remote("facts", "add", "the staging database is shared").returncode == 0
    # Without --confirm both print the same preview (workspace, count) and refuse with 2.
    pair.same("facts", "forget-all", code=2)
    pair.same("facts", "forget-all", "--confirm", "forget all", code=2)  # wrong phrase
    done = pair.remote("facts", "forget-all", "--confirm", "FORGET ALL")
    assert done.returncode == 0 and done.stdout.startswith("Forgot ")
    pair.same("facts", "list")
    assert "Nothing remembered yet." in pair.local("facts", "list").stdout
    for fact in json.loads(pair.local("facts", "list", "--status", "all", "--json").stdout)[
        "facts"
    ]:
        assert pair.local("facts", "restore", fact["id"]).returncode == 0


def test_files_edit_stale_show_history_restore(pair: Pair, tmp_path: Path) -> None:
    pair.same("files", "list", "--agent", "coder")
    text = tmp_path / "about.md"
    text.write_text("We build payment APIs.\n", encoding="utf-8")
    saved = pair.remote("files", "edit", "about_you", "--from", str(text), "--base", "0")
    assert saved.returncode == 0 and "revision 1" in saved.stdout, saved.stderr
    # A save based on revision 0 is now stale: same message (text kept in --from), exit 6.
    stale = pair.same("files", "edit", "about_you", "--from", str(text), "--base", "0", code=6)
    assert stale == ""
    err = pair.remote("files", "edit", "about_you", "--from", str(text), "--base", "0").stderr
    assert "is at revision 1" in err and str(text) in err and "fleetmem: error:" in err
    # Text typed on stdin is not lost: it is kept under the local home, as locally.
    piped = fm(
        pair.home, "files", "edit", "about_you", "--base", "0", server=pair.url, stdin="Mine.\n"
    )
    kept = re.search(r"your text is kept in (\S+\.md)\.", piped.stderr)
    assert piped.returncode == 6 and kept is not None, piped.stderr
    assert Path(kept.group(1)).parent == pair.home / "kept"
    assert Path(kept.group(1)).read_text(encoding="utf-8") == "Mine.\n"
    text.write_text("We build payment APIs in Go.\n", encoding="utf-8")
    assert pair.local("files", "edit", "about_you", "--from", str(text), "--base", "1").stdout
    pair.same("files", "show", "about_you")
    pair.same("files", "show", "about_you", "--revision", "1")
    pair.same("files", "history", "about_you")
    restored = pair.remote("files", "restore", "about_you", "1")
    assert restored.returncode == 0 and "revision 3" in restored.stdout
    pair.same("files", "history", "about_you")


def test_files_mode_ask_activity_list_preview(pair: Pair) -> None:
    pair.change(
        ("files", "mode", "glossary", "every-run"), undo=("files", "mode", "glossary", "on-demand")
    )
    # Back to the default: a fourth every-run file is refused, and other tests add one.
    assert pair.local("files", "mode", "glossary", "on-demand").returncode == 0
    pair.same("files", "show", "notes", "--agent", "coder")
    pair.same("files", "ask", "about_you", "--to", "coder")
    pair.same("files", "activity", "--limit", "10")
    pair.same("files", "loads", "run-2026-11-28-0042")
    pair.same("files", "list")
    pair.same("files", "show", "about_you", "--preview")


def test_report_and_context(pair: Pair, tmp_path: Path) -> None:
    people = tmp_path / "people.md"
    people.write_text("Ana owns the billing service.\n", encoding="utf-8")
    assert pair.local("files", "mode", "people", "every-run").returncode == 0
    assert pair.local("files", "edit", "people", "--from", str(people), "--base", "0").stdout
    pair.same("report", "coder", "--repo", REPO)
    context = pair.same("context", "coder", "--repo", REPO, normalize=True)
    assert "Ana owns the billing service." in context


def test_recall_with_facts_episodes_and_runs(pair: Pair) -> None:
    pair.same("recall", "ledger cutoff", "--repo", REPO)
    pair.same("recall", "billing", "--repo", REPO, "--paths", "billing/x.py", "--limit", "3")
    answer = json.loads(pair.remote("recall", "ledger", "--repo", REPO, "--json").stdout)
    assert {"items", "facts", "recent_runs", "repo"} <= set(answer)
    pair.same("recall", "ledger", "--repo", REPO, "--limit", "0", code=2)
    pair.same("recall", "ledger", "--as", "Bad Name!", code=4)  # no run to take a scope from


def _unnonced(text: str) -> str:
    """A briefing with its fresh per-document nonce replaced wherever it occurs."""
    found = re.search(r'nonce=\\?"([0-9a-f]{32})', text)
    return text.replace(found.group(1), "<nonce>") if found else text


def test_provider_check(pair: Pair) -> None:
    remote = pair.remote("provider", "check", "--json")
    assert remote.returncode == 0, remote
    report = json.loads(remote.stdout)
    assert report["passed"] and [c["outcome"] for c in report["checks"]] == ["pass"] * 7
    text = pair.remote("provider", "check")
    assert text.returncode == 0 and text.stdout.splitlines()[-1] == "result: passed"
    pair.same(
        "provider", "check", "--provider", "nowhere", code=3
    )  # a well-formed name nothing defines: not found


def test_briefing_preview(pair: Pair) -> None:
    for variant in (
        ("briefing", "coder", "--repo", REPO),
        ("briefing", "coder", "--repo", REPO, "--json"),
    ):
        remote, local = pair.remote(*variant), pair.local(*variant)
        assert remote.returncode == local.returncode == 0, (remote, local)
        assert _unnonced(remote.stdout) == _unnonced(local.stdout), variant
    preview = json.loads(pair.remote("briefing", "coder", "--repo", REPO, "--json").stdout)
    assert (preview["agent"], preview["repo"]) == ("coder", REPO)
    assert preview["bytes"] == len(preview["text"].encode("utf-8"))
    pair.same("briefing", "coder")  # the repository of its newest run, or the empty briefing
    pair.same("briefing", "Bad Name!", code=2)


def test_runs_open_heartbeat_and_presence(pair: Pair) -> None:
    opened = pair.remote("runs", "open", "coder", "--repo", REPO, "--branch", "main", "--json")
    assert opened.returncode == 0, opened.stderr
    run = json.loads(opened.stdout)
    beat = ("runs", "heartbeat", "--files", "src/app.py")
    token = {"FLEETMEM_RUN_TOKEN": run["token"]}
    remote = fm(pair.home, *beat, server=pair.url, **token)
    local = fm(pair.home, *beat, **token)
    assert remote.returncode == local.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout == f"run {run['run_id']} live; files edited: src/app.py\n"
    pair.same("runs", "show", run["run_id"])
    # "seen 3s ago" reads each machine's clock: compare the JSON exactly, the text calmly.
    remote_json, local_json = (
        json.loads(p.stdout)
        for p in (pair.remote("presence", "--json"), pair.local("presence", "--json"))
    )
    assert remote_json == local_json and remote_json["runs"][0]["run_id"] == run["run_id"]
    ago = re.compile(r"seen \d+[smh] ago")
    texts = [
        ago.sub("seen <ago>", p.stdout) for p in (pair.remote("presence"), pair.local("presence"))
    ]
    assert texts[0] == texts[1] and f"coder {run['run_id']}, seen <ago>" in texts[0]


def test_errors_map_back_to_the_local_message_and_exit_code(pair: Pair) -> None:
    missing = pair.same("facts", "show", "f_0000000000000000", code=3)
    assert missing == ""
    err = pair.remote("facts", "show", "f_0000000000000000").stderr
    assert err.startswith("fleetmem: error: unknown fact")
    as_json = json.loads(pair.remote("facts", "show", "f_0000000000000000", "--json").stderr)
    assert as_json["error"]["code"] == "unknown_fact"
    pair.same("facts", "list", "--limit", "0", code=2)
    assert "limit" in pair.remote("facts", "list", "--limit", "0").stderr
    pair.same("facts", "add", "   ", code=2)
    pair.same("episodes", "--since", "last tuesday", code=2)
    assert "since = 'last tuesday'" in pair.remote("episodes", "--since", "last tuesday").stderr
    pair.same("episodes", "show", "ep_missing", code=3)
    pair.same("files", "show", "no-such-file", code=2)
    pair.same("runs", "show", "run-missing", code=3)
    pair.same("forget", "ep_missing", code=3)


def test_commands_without_a_route_refuse_and_never_touch_the_local_store(
    daemon: Daemon, tmp_path: Path
) -> None:
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    for args, name in (
        (("jobs",), "jobs"),
        (("doctor",), "doctor"),
        (("facts", "sweep"), "facts sweep"),
        (("runs", "touch", "a.py"), "runs touch"),
        (("serve",), "serve"),
    ):
        proc = fm(empty, *args, server=daemon.url)
        assert proc.returncode == 2, (args, proc)
        assert f"`fleetmem {name}` works on the local store only" in proc.stderr
        assert proc.stdout == ""
    # Nothing was opened or created in the home the local path would have used.
    assert list(empty.iterdir()) == []


def test_unreachable_server_and_bad_urls_name_what_is_wrong(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    down = fm(tmp_path, "status", server=url)
    assert down.returncode == 5
    assert f"cannot reach the fleetmem server at {url}" in down.stderr
    for bad, reason in (
        ("ftp://127.0.0.1:8737", "must start with http:// or https://"),
        ("http://", "must name a host"),
        ("127.0.0.1:8737", "must start with http:// or https://"),
        ("http://127.0.0.1:notaport", "is not a URL"),
    ):
        proc = fm(tmp_path, "status", server=bad)
        assert proc.returncode == 2, bad
        assert proc.stderr.startswith(f"fleetmem: error: --server = {bad!r}: "), proc.stderr
        assert reason in proc.stderr
    from_env = fm(tmp_path, "status", FLEETMEM_SERVER="localhost:8737")
    assert from_env.returncode == 2 and "$FLEETMEM_SERVER = 'localhost:8737'" in from_env.stderr
    assert list(tmp_path.iterdir()) == []


def test_environment_variable_selects_the_daemon(daemon: Daemon, tmp_path: Path) -> None:
    # A home without a store: the output can only have come from the daemon.
    env = {"FLEETMEM_SERVER": daemon.url, "FLEETMEM_TOKEN": _control_token(daemon)}
    through_env = fm(tmp_path, "status", "--json", **env)
    assert through_env.returncode == 0, through_env.stderr
    direct = fm(daemon.home, "status", "--json")
    assert calm(through_env.stdout) == calm(direct.stdout)
    assert not (tmp_path / "fleetmem.db").exists()


def _control_token(daemon: Daemon) -> str:
    return (daemon.home / "control.token").read_text(encoding="utf-8").splitlines()[0].strip()


def test_refused_tokens_name_their_source(daemon: Daemon, tmp_path: Path) -> None:
    wrong = fm(daemon.home, "status", server=daemon.url, FLEETMEM_TOKEN="fmc_not-a-real-token")
    assert wrong.returncode == 2
    assert f"the fleetmem server at {daemon.url} refused the request (401)" in wrong.stderr
    assert "$FLEETMEM_TOKEN" in wrong.stderr
    # Another home has no control.token: nothing is sent, and the error says where to put it.
    none = fm(tmp_path, "facts", "list", server=daemon.url)
    assert none.returncode == 2
    assert "no token was sent" in none.stderr and str(tmp_path / "control.token") in none.stderr
    # A token file whose first line is wrong is named by its path.
    (tmp_path / "control.token").write_text("fmc_wrong\n", encoding="utf-8")
    named = fm(tmp_path, "facts", "list", server=daemon.url)
    assert named.returncode == 2 and str(tmp_path / "control.token") in named.stderr


def test_rate_limited_writes_exit_as_they_do_locally(tmp_path: Path) -> None:
    from fleetmem.service.bootstrap import STORE_FILE
    from fleetmem.service.fact_base import local_user
    from fleetmem.store.sqlite.store import SqliteStore

    home = tmp_path / "fleetmem-home"
    home.mkdir()
    write_config(home, VECTORS_OFF)
    d = Daemon(home)
    try:
        fact = _fact_id(fm(home, "facts", "add", "Tag releases from main.", "--json"))
        # 59 more writes of this user in the last minute, as earlier commands would have made.
        store = SqliteStore(home / STORE_FILE)
        try:
            now, who = time.time(), f"human:{local_user().name}"
            for i in range(59):
                store.fact_rate_add("default", who, "writes", now - 30 + i * 0.01)
        finally:
            store.close()
        remote = fm(home, "facts", "pin", fact, server=d.url)
        local = fm(home, "facts", "pin", fact)
        assert remote.returncode == local.returncode == 7, remote.stderr
        # The wait is counted down between the two calls; the rest must be the same.
        wait = re.compile(r"retry_after=\d+s|try again in \d+ s \(at \d\d:\d\d:\d\d UTC\)")
        assert wait.sub("<wait>", remote.stderr) == wait.sub("<wait>", local.stderr)
        assert "at most 60 writes per minute" in remote.stderr
        as_json = json.loads(fm(home, "facts", "pin", fact, "--json", server=d.url).stderr)
        assert as_json["error"]["code"] == "rate_limited"
        assert 1 <= as_json["error"]["retry_after"] <= 60
        assert json.loads(fm(home, "facts", "show", fact, "--json").stdout)["pinned"] is False
    finally:
        d.stop()
