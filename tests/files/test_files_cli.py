"""``fleetmem files``, ``fleetmem report`` and ``fleetmem context`` as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.files.conftest import corpus
from tests.surfaces.cli_helpers import run_cli, run_json

VECTORS_OFF = '[model_api]\nembedding_model = ""\n'


@pytest.fixture
def cli_home(home: Path) -> Path:
    write_config(home, VECTORS_OFF)
    return home


def test_list_edit_show_and_preview(cli_home: Path, tmp_path: Path) -> None:
    listing = run_json(cli_home, "files", "list")
    assert [f["name"] for f in listing["workspace"]] == [
        "about_you", "organization", "people", "glossary", "voice", "roster",
    ]  # fmt: skip
    notes = tmp_path / "notes.md"
    notes.write_text(corpus()["en_instructions.md"] * 40, encoding="utf-8")
    saved = run_json(
        cli_home, "files", "edit", "notes", "--agent", "research-agent", "--base", "0",
        "--from", str(notes), "--user", "marina",
    )  # fmt: skip
    assert saved["revision"] == 1 and saved["updated_by"] == "user:marina"
    assert saved["meter"]["state"] == "over" and saved["meter"]["used"] == 1500
    shown = run_json(cli_home, "files", "show", "Notes", "--agent", "research-agent", "--preview")
    assert shown["body"] == notes.read_text(encoding="utf-8")
    assert "Skipped — the agent never sees this" in shown["preview"]
    assert shown["meter"]["text"].startswith("Notes: 1,500 of 1,500 tokens used,")
    text = run_cli(cli_home, "files", "show", "notes", "--agent", "research-agent").stdout
    assert "Reaches the agent: 1,500 / 1,500 tokens (over)" in text
    assert "Lead with what matters most" in text
    listed = run_json(cli_home, "files", "list", "--agent", "research-agent")
    assert [f["name"] for f in listed][:3] == ["identity", "role", "notes"]


def test_edit_from_stdin_and_a_stale_save_keeps_the_text(cli_home: Path) -> None:
    run_cli(cli_home, "files", "edit", "glossary", "--base", "0", stdin=b"invoice: a bill\n")
    stale = run_cli(
        cli_home, "files", "edit", "glossary", "--base", "0", stdin=b"invoice: mine\n", check=False
    )
    assert stale.returncode == 6
    assert "changed while you were editing" in stale.stderr
    kept = next((cli_home / "kept").iterdir())
    assert kept.read_text(encoding="utf-8") == "invoice: mine\n"
    assert str(kept) in stale.stderr
    shown = run_json(cli_home, "files", "show", "glossary")
    assert shown["body"] == "invoice: a bill\n" and shown["revision"] == 1


def test_mode_limit_history_restore_ask_and_activity(cli_home: Path) -> None:
    run_json(cli_home, "files", "mode", "people", "every-run")
    refused = run_cli(cli_home, "files", "mode", "roster", "every-run", check=False)
    assert refused.returncode == 6
    assert "Switch one of About you, Voice or People to on-demand first." in refused.stderr
    run_cli(cli_home, "files", "edit", "voice", "--base", "0", stdin=b"one\n")
    run_cli(cli_home, "files", "edit", "voice", "--base", "1", stdin=b"two\n")
    history = run_json(cli_home, "files", "history", "voice")
    assert [h["revision"] for h in history] == [2, 1, 0]
    restored = run_json(cli_home, "files", "restore", "voice", "1")
    assert restored["revision"] == 3
    assert run_json(cli_home, "files", "show", "voice", "--revision", "2")["body"] == "two\n"
    ask = run_json(cli_home, "files", "ask", "voice", "--to", "editor")
    assert ask["message"] == "@editor update the Voice context file: "
    assert ask["attachment"]["text"] == "one\n"
    activity = run_json(cli_home, "files", "activity")
    assert [a["action"] for a in activity][:3] == ["restore", "save", "save"]


def test_bad_input_exits_2_naming_the_field(cli_home: Path) -> None:
    bad = run_cli(cli_home, "files", "edit", "voice", "--base", "0", stdin=b"x\x00y", check=False)
    assert bad.returncode == 2 and "U+0000" in bad.stderr and "text" in bad.stderr
    wrong = run_cli(cli_home, "files", "show", "notes", check=False)
    assert wrong.returncode == 3 and "--agent" in wrong.stderr  # another family's file: not found
    missing = run_cli(cli_home, "files", "show", "voice", "--revision", "9", check=False)
    assert missing.returncode == 3


def test_report_and_context_agree_and_loads_are_empty_for_a_preview(cli_home: Path) -> None:
    run_cli(
        cli_home, "files", "edit", "notebook", "--project", "github.com/acme/api", "--base", "0",
        stdin=corpus()["ledger.py"].encode(),
    )  # fmt: skip
    run_cli(
        cli_home, "files", "edit", "identity", "--agent", "api-fixer", "--base", "0",
        stdin=corpus()["emoji.md"].encode(),
    )  # fmt: skip
    report = run_json(cli_home, "report", "api-fixer", "--repo", "github.com/acme/api")
    assert [s["key"] for s in report["segments"]][:3] == [
        "notebook", "workspace_context", "identity",
    ]  # fmt: skip
    assert report["empty"] is False and report["backstop"] == 17_000
    context = run_json(cli_home, "context", "api-fixer", "--repo", "github.com/acme/api")
    assert context["total"] == report["total"]  # same content, same nonce length
    by_key = {s["key"]: s for s in context["segments"]}
    assert by_key["identity"]["used"] == report["segments"][2]["used"] > 0
    raw = run_cli(cli_home, "context", "api-fixer", "--repo", "github.com/acme/api").stdout
    assert corpus()["ledger.py"] in raw and corpus()["emoji.md"] in raw
    text = run_cli(cli_home, "report", "api-fixer").stdout
    assert "Identity" in text and "/  1,200" in text
    assert run_json(cli_home, "files", "loads", "nope") == []
    empty = run_json(cli_home, "report", "brand-new")
    assert empty["message"] == "Nothing written yet — this agent runs on defaults."
    assert json.dumps(empty)  # JSON-ready
