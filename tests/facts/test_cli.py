"""``fleetmem facts ...`` as a real subprocess over a real home (seed 003 S9, S10, S15, S16)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write_config
from tests.facts.conftest import VECTORS_OFF
from tests.surfaces.cli_helpers import run_cli, run_json

GH_TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" * 2


def test_empty_state_add_list_show_and_history(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    empty = run_cli(home, "facts", "list")
    assert "Nothing remembered yet." in empty.stdout
    added = run_json(
        home, "facts", "add", "Never force-push to main.", "--kind", "constraint", "--pin"
    )
    fact = added["fact"]
    assert (fact["status"], fact["kind"], fact["pinned"], fact["origin"]) == (
        "active",
        "constraint",
        True,
        "human",
    )
    listing = run_json(home, "facts", "list")
    assert [f["id"] for f in listing["facts"]] == [fact["id"]]
    assert listing["counts"]["pinned"] == 1
    text = run_cli(home, "facts", "list").stdout
    assert "Never force-push to main." in text and "[pinned]" in text and "(you)" in text
    shown = run_json(home, "facts", "show", fact["id"])
    assert shown["confidence"] > 0.8 and shown["provenance"][0]["origin"] == "human"
    edited = run_json(home, "facts", "edit", fact["id"], "Never force-push to main or release.")
    assert edited["fact"]["revision"] == 2
    history = run_json(home, "facts", "history", fact["id"])
    assert [e["action"] for e in history["entries"]] == ["create", "edit"]
    assert history["entries"][1]["body_before"] == "Never force-push to main."
    assert "was: " in run_cli(home, "facts", "history", fact["id"]).stdout


def test_refusals_have_exit_codes_and_never_echo_a_secret(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    run_cli(home, "facts", "add", "Use UTC in cron jobs.")
    dup = run_cli(home, "facts", "add", "use utc in cron jobs", check=False)
    assert dup.returncode == 6 and "already remembered as f_" in dup.stderr
    secret = run_cli(home, "facts", "add", f"deploy with {GH_TOKEN}", check=False)
    assert secret.returncode == 2 and "github_token" in secret.stderr
    assert GH_TOKEN not in secret.stderr + secret.stdout
    missing = run_cli(home, "facts", "show", "f_nope", "--json", check=False)
    assert missing.returncode == 3
    assert json.loads(missing.stderr)["error"]["code"] == "unknown_fact"
    bad = run_cli(home, "facts", "add", "x" * 501, check=False)
    assert bad.returncode == 2 and "501 characters" in bad.stderr


def test_search_without_an_embedder_says_so_and_offers_to_add(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    run_cli(home, "facts", "add", "Ask Priya about the Initech integration.")
    found = run_cli(home, "facts", "search", "initech").stdout
    assert "Matching by exact words" in found and "Initech integration" in found
    nothing = run_cli(home, "facts", "search", "refund policy").stdout
    assert "No fact matches 'refund policy'" in nothing
    assert 'fleetmem facts add "refund policy"' in nothing
    data = run_json(home, "facts", "search", "initech")
    assert data["degraded"] == "embeddings_unavailable" and data["hits"][0]["matched"] == ["phrase"]


def test_review_forget_restore_votes_and_trace(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    a = run_json(home, "facts", "add", "Squash-merge pull requests.")["fact"]["id"]
    b = run_json(home, "facts", "add", "Pull requests are squash merged.")["fact"]["id"]
    merged = run_json(home, "facts", "review", b, "merge", "--into", a)
    assert (merged["status"], merged["merged_into"]) == ("merged", a)
    forgot = run_json(home, "facts", "forget", a)
    assert forgot["fact"]["status"] == "forgotten" and forgot["undo_until"]
    assert run_json(home, "facts", "restore", a)["status"] == "active"
    votes = run_json(home, "facts", "votes", a)
    assert votes["votes"] == [] and votes["support"]["runs"] == 0
    assert "no votes" in run_cli(home, "facts", "votes", a).stdout
    assert run_json(home, "facts", "trace", "run-1") == []
    bad = run_cli(home, "facts", "review", a, "confirm", check=False)
    assert bad.returncode == 6 and "cannot confirm a fact that is active" in bad.stderr


def test_forget_all_states_what_is_untouched_and_needs_the_phrase(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    run_cli(home, "facts", "add", "One.")
    run_cli(home, "facts", "add", "Two.")
    ask = run_cli(home, "facts", "forget-all", check=False)
    assert ask.returncode == 2
    assert "forgets all 2 live facts" in ask.stderr
    assert "context files, agent files" in ask.stderr and "not affected" in ask.stderr
    wrong = run_cli(home, "facts", "forget-all", "--confirm", "forget all", check=False)
    assert wrong.returncode == 2
    assert run_json(home, "facts", "list")["counts"]["live"] == 2
    done = run_cli(home, "facts", "forget-all", "--confirm", "FORGET ALL")
    assert "Forgot 2 facts" in done.stdout and "Agents start learning again" in done.stdout
    after = run_cli(home, "facts", "list").stdout
    assert "Nothing remembered yet." in after and "2 forgotten facts can be restored" in after
    run_cli(home, "facts", "add", "Three.")  # capture resumes at once


def test_pin_unpin_and_sweep(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    fact = run_json(home, "facts", "add", "Pin me.")["fact"]["id"]
    assert run_json(home, "facts", "pin", fact)["pinned"] is True
    assert run_json(home, "facts", "unpin", fact)["pinned"] is False
    assert run_json(home, "facts", "sweep") == {"purged": 0, "embedded": 0}
