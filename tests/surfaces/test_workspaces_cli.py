"""``fleetmem workspaces`` and the global ``--workspace``, as a real console script: on the
local store and through a daemon (``--server``), with the errors and exit codes of docs/cli.md
(2 bad input, 3 not found, 6 conflict)."""

from __future__ import annotations

import json
from pathlib import Path

from fleetmem.service.bootstrap import build
from tests.conftest import home_store, write_config
from tests.surfaces.cli_helpers import run_cli, run_json
from tests.surfaces.test_http import Daemon
from tests.workspace_fill import CONFIG, fill


def test_create_list_rename_and_act_in_a_workspace(home: Path) -> None:
    write_config(home, CONFIG)
    made = run_json(home, "workspaces", "create", "Acme Corp")
    acme = made["id"]
    assert made["name"] == "Acme Corp" and acme.startswith("acme-corp-")
    text = run_cli(home, "workspaces", "list").stdout
    assert text.splitlines()[0].startswith("* default") and f"{acme}  Acme Corp" in text
    run_cli(home, "--workspace", "acme corp", "facts", "add", "Acme deploys on Fridays.")
    run_cli(home, "facts", "add", "Home deploys on Mondays.")
    in_acme = run_json(home, "--workspace", acme, "facts", "list")
    assert [f["body"] for f in in_acme["facts"]] == ["Acme deploys on Fridays."]
    at_home = run_json(home, "facts", "list")
    assert [f["body"] for f in at_home["facts"]] == ["Home deploys on Mondays."]
    listed = run_json(home, "--workspace", acme, "workspaces", "list")
    assert listed["current"] == acme
    # Another workspace's fact is "not found" (exit 3), never "forbidden".
    other = at_home["facts"][0]["id"]
    missing = run_cli(home, "--workspace", acme, "facts", "show", other, check=False)
    assert missing.returncode == 3 and "unknown fact" in missing.stderr
    # Files too: each workspace has its own Voice.
    run_cli(
        home, "--workspace", acme, "files", "edit", "voice", "--base", "0", stdin=b"Acme voice."
    )
    shown = run_json(home, "--workspace", acme, "files", "show", "voice")
    assert shown["body"] == "Acme voice."
    assert run_json(home, "files", "show", "voice")["body"] == ""
    renamed = run_json(home, "workspaces", "rename", "Acme Corp", "Globex")
    assert (renamed["id"], renamed["name"]) == (acme, "Globex")
    # $FLEETMEM_WORKSPACE names it too.
    env_run = _run_env(home, {"FLEETMEM_WORKSPACE": "globex"}, "facts", "list", "--json")
    assert [f["body"] for f in json.loads(env_run.stdout)["facts"]] == ["Acme deploys on Fridays."]


def test_bad_input_names_the_field_with_exit_codes(home: Path) -> None:
    write_config(home, CONFIG)
    run_cli(home, "workspaces", "create", "Acme")
    for args, code, words in [
        (("workspaces", "create", ""), 2, "name = '': must not be empty"),
        (("workspaces", "create", "x" * 70), 2, "at most 64"),
        (("workspaces", "create", "Ac\u200bme"), 2, "U+200B"),
        (("workspaces", "create", "ACME"), 6, "already named 'Acme'"),
        (("workspaces", "rename", "nowhere", "Fine"), 3, "unknown workspace"),
        (("workspaces", "delete", "default", "--confirm", "default"), 2, "workspace = "),
        (("--workspace", "nowhere", "facts", "list"), 3, "unknown workspace"),
        (("--workspace", " ", "facts", "list"), 2, "--workspace"),
    ]:
        proc = run_cli(home, *args, check=False)
        assert proc.returncode == code, (args, proc.stderr)
        assert words in proc.stderr, (args, proc.stderr)


def test_delete_previews_then_needs_the_name(home: Path) -> None:
    write_config(home, CONFIG)
    app = build(home, {"HOME": str(home.parent)})
    acme = app.workspaces.create("Acme").id
    fill(app.in_workspace(acme), "acme")
    app.close()
    run_cli(home, "token", "create", "--tier", "read", "--workspace", "Acme", "--name", "ci")
    tokens = run_json(home, "token", "list")["tokens"]
    assert [(t["name"], t["workspace"]) for t in tokens] == [("ci", acme)]
    preview = run_cli(home, "workspaces", "delete", acme, check=False)
    assert preview.returncode == 2
    assert f"This deletes workspace Acme (id {acme}): 2 facts, 8 context files" in preview.stderr
    assert "API tokens revoked: ci" in preview.stderr and "--confirm Acme" in preview.stderr
    wrong = run_cli(home, "workspaces", "delete", acme, "--confirm", "FORGET ALL", check=False)
    assert wrong.returncode == 2 and "confirm = 'FORGET ALL'" in wrong.stderr
    done = run_json(home, "workspaces", "delete", "acme", "--confirm", "Acme")
    assert done["deleted"]["id"] == acme and done["tokens_revoked"] == ["ci"]
    with home_store(home) as store:
        assert set(store.workspace_row_counts(acme).values()) == {0}
    assert run_json(home, "token", "list")["tokens"] == []
    assert [w["id"] for w in run_json(home, "workspaces", "list")["workspaces"]] == ["default"]


def test_through_a_daemon(home: Path) -> None:
    write_config(home, CONFIG)
    daemon = Daemon(home)
    server = ("--server", daemon.url)
    try:
        made = run_json(home, *server, "workspaces", "create", "Acme")
        acme = made["id"]
        listed = run_json(home, *server, "workspaces", "list")
        assert [w["id"] for w in listed["workspaces"]] == ["default", acme]
        renamed = run_json(home, *server, "workspaces", "rename", "acme", "Acme Two")
        assert renamed["name"] == "Acme Two"
        # The control token acts in the default workspace: --workspace acme is refused.
        refused = run_cli(home, *server, "--workspace", acme, "facts", "list", check=False)
        assert refused.returncode == 2
        assert "acts in workspace default only" in refused.stderr
        assert "fleetmem token create --workspace" in refused.stderr
        # A token bound to acme acts there, through --server, and sees only its workspace.
        minted = run_json(home, "token", "create", "--tier", "control", "--workspace", acme)
        env = {"FLEETMEM_TOKEN": minted["token"]}
        proc = _run_env(home, env, *server, "--workspace", "Acme Two", "facts", "add", "Hi.")
        assert proc.returncode == 0, proc.stderr
        theirs = json.loads(_run_env(home, env, *server, "workspaces", "list", "--json").stdout)
        assert [w["id"] for w in theirs["workspaces"]] == [acme]
        assert run_json(home, *server, "facts", "list")["facts"] == []
        denied = _run_env(home, env, *server, "workspaces", "create", "Sneaky")
        assert denied.returncode == 2 and "only the operator" in denied.stderr
        preview = run_cli(home, *server, "workspaces", "delete", acme, check=False)
        assert preview.returncode == 2 and "1 fact," in preview.stderr
        done = run_json(home, *server, "workspaces", "delete", acme, "--confirm", "Acme Two")
        assert done["total_rows"] > 0 and done["tokens_revoked"] == [minted["name"]]
        gone = _run_env(home, env, *server, "facts", "list")
        assert gone.returncode == 2 and "unknown API token" in gone.stderr  # revoked with it
    finally:
        daemon.stop()


def _run_env(home: Path, env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    import subprocess

    from tests.surfaces.cli_helpers import FLEETMEM, env_for

    return subprocess.run(
        [FLEETMEM, *args],
        capture_output=True,
        text=True,
        env=env_for(home, **env),
        timeout=120,
    )


def test_a_workspace_an_agent_is_bound_to_is_not_deleted_until_the_key_goes(home: Path) -> None:
    write_config(home, CONFIG + '\n[agent.acme-bot]\nworkspace = "Acme Corp"\n')
    acme = run_json(home, "workspaces", "create", "Acme Corp")["id"]
    for args in (("delete", acme), ("delete", acme, "--confirm", "Acme Corp")):
        refused = run_cli(home, "workspaces", *args, check=False)
        assert refused.returncode == 6, refused.stderr
        assert "agent acme-bot acts in it (agent.acme-bot.workspace)" in refused.stderr
    assert acme in run_cli(home, "workspaces", "list").stdout
    write_config(home, CONFIG + "\n[agent.acme-bot]\n")
    run_cli(home, "workspaces", "delete", acme, "--confirm", "Acme Corp")
    assert acme not in run_cli(home, "workspaces", "list").stdout
