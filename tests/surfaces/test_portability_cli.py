"""``fleetmem export``, ``import`` and ``backup`` as a person runs them: the real console
script in a subprocess, one home per machine."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.conftest import EXAMPLE, write_config
from tests.surfaces.cli_helpers import run_cli, run_json

NO_VECTORS = '[model_api]\nembedding_model = ""\n'


def _home(tmp_path: Path, name: str) -> Path:
    home = tmp_path / name
    home.mkdir()
    write_config(home, NO_VECTORS)
    return home


def test_a_memory_moves_to_a_new_home_and_a_second_import_adds_nothing(tmp_path: Path) -> None:
    old = _home(tmp_path, "old")
    run_cli(old, "facts", "add", "Ledger tests run in UTC.")
    run_cli(old, "runs", "ingest", str(EXAMPLE))
    archive = tmp_path / "memory.jsonl"
    exported = run_json(old, "export", str(archive))
    assert exported["counts"]["facts"] == 1 and exported["counts"]["runs"] == 1

    new = _home(tmp_path, "new")
    first = run_cli(new, "import", str(archive))
    assert "facts" in first.stdout and "Traceback" not in first.stderr
    assert "imported" in first.stderr  # progress goes to stderr
    again = run_json(new, "import", str(archive))
    assert sum(again["inserted"].values()) == 0
    listed = run_json(new, "facts", "list")
    assert [f["body"] for f in listed["facts"]] == ["Ledger tests run in UTC."]
    assert len(run_json(new, "episodes")) == 1


def test_a_newer_or_damaged_archive_is_refused_with_exit_2_and_no_traceback(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path, "home")
    run_cli(home, "facts", "add", "Ledger tests run in UTC.")
    archive = tmp_path / "memory.jsonl"
    run_cli(home, "export", str(archive))
    lines = archive.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["version"] = 99
    newer = tmp_path / "newer.jsonl"
    newer.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    proc = run_cli(_home(tmp_path, "other"), "import", str(newer), check=False)
    assert proc.returncode == 2
    assert "newer" in proc.stderr and "Traceback" not in proc.stderr
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    proc = run_cli(_home(tmp_path, "third"), "import", str(truncated), check=False)
    assert proc.returncode == 2 and "truncated" in proc.stderr
    missing = run_cli(home, "import", str(tmp_path / "nope.jsonl"), check=False)
    assert missing.returncode == 2 and "cannot be read" in missing.stderr


def test_claude_memory_and_memory_json_become_proposals_once(tmp_path: Path) -> None:
    home = _home(tmp_path, "home")
    claude = tmp_path / "CLAUDE.md"
    claude.write_text(
        "# Notes\n- Never deploy billing on Fridays.\n- Use UTC in ledger tests.\n"
        "- password=hunter2-Very-Secret-9\n",
        encoding="utf-8",
    )
    out = run_json(home, "import", str(claude))
    assert out["format"] == "claude-md" and out["proposed"] == 2
    assert out["refused"][0]["line"] == 4 and "secret" in out["refused"][0]["reason"]
    assert run_json(home, "import", str(claude))["duplicates"] == 2
    graph = tmp_path / "memory.json"
    graph.write_text(
        json.dumps(
            {"type": "entity", "name": "api", "entityType": "repo", "observations": ["Uses Go"]}
        )
        + "\n",
        encoding="utf-8",
    )
    assert run_json(home, "import", str(graph))["proposed"] == 1
    proposed = run_json(home, "facts", "list", "--status", "proposed")
    assert sorted(f["body"] for f in proposed["facts"]) == [
        "Never deploy billing on Fridays.",
        "Use UTC in ledger tests.",
        "api (repo): Uses Go",
    ]
    assert all(f["status"] == "proposed" for f in proposed["facts"])
    assert "hunter2" not in (home / "fleetmem.db").read_bytes().decode("latin-1")


def test_backup_writes_a_store_that_opens_as_a_home(tmp_path: Path) -> None:
    home = _home(tmp_path, "home")
    run_cli(home, "facts", "add", "Ledger tests run in UTC.")
    copy = tmp_path / "restored" / "fleetmem.db"
    copy.parent.mkdir()
    run_cli(home, "backup", str(copy))
    with sqlite3.connect(copy) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    write_config(copy.parent, NO_VECTORS)
    listed = run_json(copy.parent, "facts", "list")
    assert [f["body"] for f in listed["facts"]] == ["Ledger tests run in UTC."]
    again = run_cli(home, "backup", str(copy), check=False)
    assert again.returncode == 2 and "exists" in again.stderr
