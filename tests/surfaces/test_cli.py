"""The fleetmem command line, run as a real subprocess against a real store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, make_record, session, write_config
from tests.surfaces.cli_helpers import run_cli, run_json

VECTORS_OFF = '[model_api]\nembedding_model = ""\n'


@pytest.fixture
def cli_home(home: Path) -> Path:
    write_config(home, VECTORS_OFF)
    return home


def test_example_ingests_and_is_found_by_exact_words(cli_home: Path) -> None:
    out = run_json(cli_home, "runs", "ingest", str(EXAMPLE))
    assert out["status"] == "recorded" and out["episode_id"].startswith("ep_")
    found = run_json(
        cli_home, "recall", "settlement fixture timezone", "--repo", "github.com/acme/api"
    )
    assert [i["episode_id"] for i in found["items"]] == [out["episode_id"]]
    assert found["degraded"] is None
    text = run_cli(cli_home, "recall", "ledger", "--as", "api-fixer").stdout
    assert out["episode_id"] in text


def test_paraphrase_with_no_shared_word_is_found_with_embeddings(home: Path) -> None:
    # Default configuration: the built-in offline model is on.
    out = run_json(home, "runs", "ingest", str(EXAMPLE))
    unrelated = make_record(
        run_id="unrelated",
        result_text="Bumped the Docker base image and refreshed the lockfile; CI is green.",
        outcome="succeeded",
        reason="completed",
        sessions=[session(edits=("Dockerfile",))],
    )
    record = home / "unrelated.json"
    record.write_text(json.dumps(unrelated))
    run_json(home, "runs", "ingest", str(record))
    query = "sporadic bookkeeping assertion varying by hour"
    episode_text = run_json(home, "episodes", "show", out["episode_id"])["text"].lower()
    assert not set(re.findall(r"\w+", query)) & set(re.findall(r"\w+", episode_text))
    found = run_json(home, "recall", query, "--repo", "github.com/acme/api", "--limit", "2")
    assert found["items"][0]["episode_id"] == out["episode_id"]
    status = run_json(home, "status")
    assert status["embedding_model"].startswith("local:")
    assert status["vectors_missing"] == 0


def test_stdin_and_bad_record(cli_home: Path) -> None:
    good = EXAMPLE.read_bytes()
    proc = run_cli(cli_home, "runs", "ingest", "-", stdin=good)
    assert "recorded" in proc.stdout
    bad = make_record(run_id="bad", outcome="exploded")
    proc = run_cli(cli_home, "runs", "ingest", "-", stdin=json.dumps(bad).encode(), check=False)
    assert proc.returncode == 2
    assert "outcome" in proc.stderr and "exploded" in proc.stderr
    proc = run_cli(cli_home, "runs", "ingest", "/no/such/file.json", check=False)
    assert proc.returncode == 2 and "file" in proc.stderr
    assert sum(run_json(cli_home, "status")["runs"].values()) == 1


def test_episodes_list_show_and_forget(cli_home: Path) -> None:
    ep = run_json(cli_home, "runs", "ingest", str(EXAMPLE))["episode_id"]
    listed = run_json(cli_home, "episodes", "--agent", "api-fixer", "--since", "3650d")
    assert [e["episode_id"] for e in listed] == [ep]
    assert run_json(cli_home, "episodes", "--repo", "github.com/acme/other") == []
    shown = run_json(cli_home, "episodes", "show", ep)
    assert shown["episode"]["episode_id"] == ep
    assert shown["text"].startswith(f"episode_id: {ep}\n")
    assert "Fix the flaky ledger" not in json.dumps(shown)  # the prompt never leaves
    assert shown["index"][0]["state"] == "recorded"
    forgot = run_json(cli_home, "forget", ep)
    assert forgot["provider_ids_forgotten"] == 1
    found = run_json(cli_home, "recall", "ledger", "--repo", "github.com/acme/api")
    assert found["items"] == []
    gone = run_cli(cli_home, "episodes", "show", ep, check=False)
    assert gone.returncode == 3 and "forgotten" in gone.stderr and f"forget {ep}" in gone.stderr
    again = run_json(cli_home, "forget", ep)  # forgetting again reports each index's state
    assert again["already_forgotten"] and again["provider_ids_pending"] == 0
    missing = run_cli(cli_home, "episodes", "show", "ep_nope", check=False)
    assert missing.returncode == 3
    assert run_cli(cli_home, "forget", "ep_nope", check=False).returncode == 3


def test_recall_errors_name_the_field(cli_home: Path) -> None:
    proc = run_cli(cli_home, "recall", "x" * 600, "--repo", "github.com/acme/api", check=False)
    assert proc.returncode == 2 and "query" in proc.stderr
    proc = run_cli(cli_home, "recall", "ledger", "--as", "nobody", check=False)
    assert proc.returncode == 4
    proc = run_cli(
        cli_home, "recall", "ledger", "--repo", "github.com/acme/api", "--limit", "50", check=False
    )
    assert proc.returncode == 2 and "limit" in proc.stderr


def test_bad_configuration_is_reported(home: Path) -> None:
    write_config(home, "[memory.episodes]\nexcerpt_chars = 5000\n")
    proc = run_cli(home, "status", check=False)
    assert proc.returncode == 2
    assert "memory.episodes.excerpt_chars" in proc.stderr and "5000" in proc.stderr


def test_status_text(cli_home: Path) -> None:
    run_cli(cli_home, "runs", "ingest", str(EXAMPLE))
    out = run_cli(cli_home, "status").stdout
    assert "provider        builtin" in out and "1 live" in out


def test_logs_carry_ids_and_counts_never_text_or_queries(cli_home: Path) -> None:
    proc = run_cli(cli_home, "-v", "runs", "ingest", str(EXAMPLE))
    assert "run.ingested" in proc.stderr and "episode.recorded" in proc.stderr
    proc2 = run_cli(cli_home, "-v", "recall", "settlement fixture", "--repo", "github.com/acme/api")
    logs = proc.stderr + proc2.stderr
    for secret_ish in ("settlement fixture", "ledger reconciliation", "Fix the flaky"):
        assert secret_ish not in logs
