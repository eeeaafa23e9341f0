"""``fleetmem install | uninstall claude-code | codex``: the files they write, run for real."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from fleetmem.integrations.claude_code import SERVER_ARGS
from fleetmem.token_ranks import RANKS_FILE, open_counter
from tests.integrations.conftest import World
from tests.surfaces.cli_helpers import FLEETMEM, env_for

UNRELATED_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
}


def _run(world: World, *args: str) -> Any:
    import subprocess

    from tests.surfaces.cli_helpers import env_for

    proc = subprocess.run(
        [FLEETMEM, *args, "--json"],
        capture_output=True,
        text=True,
        env=env_for(world.home, HOME=str(world.tmp), CODEX_HOME=str(world.tmp / "codex")),
        cwd=world.repo,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)


def _ours(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [h for g in groups for h in g["hooks"] if " hook claude-code " in h["command"]]


def test_install_claude_code_user_scope_is_idempotent_and_keeps_unrelated_settings(
    world: World,
) -> None:
    world.config("")
    settings = world.tmp / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(UNRELATED_SETTINGS, indent=4))
    claude_json = world.tmp / ".claude.json"
    claude_json.write_text(
        json.dumps({"numStartups": 7, "mcpServers": {"other": {"command": "x"}}})
    )

    first = _run(world, "install", "claude-code")
    assert [c["changed"] for c in first] == [True, True]
    assert all(c["backup"] for c in first)
    # The token ranks the hooks count new lines from are kept, so the first session need
    # not load the vocabulary to write them.
    assert open_counter(world.home / RANKS_FILE) is not None
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["permissions"] == UNRELATED_SETTINGS["permissions"]
    assert data["hooks"]["Stop"] == UNRELATED_SETTINGS["hooks"]["Stop"]
    post = data["hooks"]["PostToolUse"]
    assert post[0] == UNRELATED_SETTINGS["hooks"]["PostToolUse"][0]
    events = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "SessionEnd")
    for event in events:
        [entry] = _ours(data["hooks"][event])
        assert entry["command"].endswith(f" hook claude-code {event}")
        assert entry["command"].startswith(str(Path(FLEETMEM).resolve()))
        assert entry["type"] == "command" and entry["timeout"] >= 10
    assert post[-1]["matcher"] == "Edit|MultiEdit|Write|NotebookEdit|Bash"
    servers = json.loads(claude_json.read_text())
    assert servers["numStartups"] == 7 and servers["mcpServers"]["other"] == {"command": "x"}
    assert servers["mcpServers"]["fleetmem"]["args"] == ["mcp", "--attach", "claude-code"]
    # A custom FLEETMEM_HOME is pinned, so the hooks find this store.
    assert servers["mcpServers"]["fleetmem"]["env"] == {"FLEETMEM_HOME": str(world.home)}
    assert f"--home {world.home}" in _ours(data["hooks"]["SessionStart"])[0]["command"]
    backups = sorted(p.name for p in settings.parent.iterdir())

    second = _run(world, "install", "claude-code")
    assert [c["changed"] for c in second] == [False, False]
    assert sorted(p.name for p in settings.parent.iterdir()) == backups  # no new backup

    _run(world, "uninstall", "claude-code")
    assert json.loads(settings.read_text()) == UNRELATED_SETTINGS
    assert json.loads(claude_json.read_text()) == {
        "numStartups": 7,
        "mcpServers": {"other": {"command": "x"}},
    }


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (but .git) with its text: what a `git status` would see."""
    return {
        str(p.relative_to(root)): p.read_text(errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_install_claude_code_project_scope_writes_portable_entries(world: World) -> None:
    world.config("")
    untouched = _tree(world.repo)
    changes = _run(world, "install", "claude-code", "--scope", "project", "--agent", "api-fixer")
    settings = world.repo / ".claude" / "settings.json"
    mcp = world.repo / ".mcp.json"
    assert {c["path"] for c in changes} == {str(settings), str(mcp)}
    assert all(c["backup"] is None for c in changes)  # nothing existed to back up
    hooks = json.loads(settings.read_text())["hooks"]
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"):
        # `fleetmem` from PATH, no --home: the same command works in every checkout.
        [entry] = _ours(hooks[event])
        assert entry["command"] == f"fleetmem hook claude-code {event} --agent api-fixer"
    server = json.loads(mcp.read_text())["mcpServers"]["fleetmem"]
    # Connected before the first turn: what SessionStart left out is read from its resource.
    assert server == {
        "type": "stdio",
        "command": "fleetmem",
        "args": SERVER_ARGS,
        "alwaysLoad": True,
    }
    for text in (settings.read_text(), mcp.read_text()):
        assert str(world.home) not in text and "FLEETMEM_HOME" not in text
        assert str(Path(FLEETMEM).parent) not in text and str(world.tmp) not in text

    _run(world, "uninstall", "claude-code", "--scope", "project")
    # Created by install, so gone: no `{}` files, no empty .claude folder, no backups.
    assert _tree(world.repo) == untouched
    assert not (world.repo / ".claude").exists()


def test_project_uninstall_keeps_what_was_there_and_leaves_no_backup_in_the_repo(
    world: World,
) -> None:
    world.config("")
    settings = world.repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(UNRELATED_SETTINGS, indent=4))
    mcp = world.repo / ".mcp.json"
    mcp.write_text("{}\n")  # an empty file someone committed: it stays, and stays empty
    untouched = _tree(world.repo)

    first = _run(world, "install", "claude-code", "--scope", "project")
    assert all(c["backup"] for c in first)
    for change in first:  # kept under the fleetmem home, never in the repository
        assert Path(change["backup"]).is_relative_to(world.home / "backups")
        assert json.loads(Path(change["backup"]).read_text()) in (UNRELATED_SETTINGS, {})
    assert set(_tree(world.repo)) == set(untouched)  # no new file in the checkout
    _run(world, "install", "claude-code", "--scope", "project")  # idempotent

    removed = _run(world, "uninstall", "claude-code", "--scope", "project")
    assert not any(c["removed"] for c in removed)
    assert json.loads(settings.read_text()) == UNRELATED_SETTINGS
    assert json.loads(mcp.read_text()) == {}
    assert set(_tree(world.repo)) == set(untouched)


def test_project_uninstall_without_the_install_record_still_cleans_up(world: World) -> None:
    """A teammate's checkout: the files were committed by someone else's install."""
    world.config("")
    untouched = _tree(world.repo)
    _run(world, "install", "claude-code", "--scope", "project")
    (world.home / "integrations" / "claude-code.json").unlink()
    mcp = world.repo / ".mcp.json"
    data = json.loads(mcp.read_text())
    data["mcpServers"]["other"] = {"command": "x"}  # added since: must survive
    mcp.write_text(json.dumps(data))
    _run(world, "uninstall", "claude-code", "--scope", "project")
    assert json.loads(mcp.read_text()) == {"mcpServers": {"other": {"command": "x"}}}
    assert not (world.repo / ".claude" / "settings.json").exists()
    assert set(_tree(world.repo)) == set(untouched) | {".mcp.json"}


def test_user_scope_uninstall_removes_files_it_created_and_keeps_claude_json(
    world: World,
) -> None:
    world.config("")
    claude_json = world.tmp / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 3}))
    _run(world, "install", "claude-code")
    settings = world.tmp / ".claude" / "settings.json"
    assert settings.exists()
    _run(world, "uninstall", "claude-code")
    assert not settings.exists()  # installing created it, with its folder
    assert not (world.tmp / ".claude").exists()
    assert json.loads(claude_json.read_text()) == {"numStartups": 3}


def test_install_refuses_a_settings_file_that_is_not_json(world: World) -> None:
    import subprocess

    from tests.surfaces.cli_helpers import env_for

    world.config("")
    settings = world.tmp / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    proc = subprocess.run(
        [FLEETMEM, "install", "claude-code"],
        capture_output=True,
        text=True,
        env=env_for(world.home, HOME=str(world.tmp)),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr
    assert settings.read_text() == "{ not json"


CODEX_CONFIG = """model = "gpt-5-codex"  # my model

[mcp_servers.docs]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[profiles.fast]
model = "gpt-5-mini"
"""


def test_install_codex_adds_one_table_and_keeps_the_rest_byte_for_byte(world: World) -> None:
    world.config("")
    config = world.tmp / "codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    hooks_file = config.parent / "hooks.json"
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}],
                        "PostToolUse": [{"matcher": "Bash", "hooks": [
                            {"type": "command", "command": "audit-log"}]}]}}  # fmt: skip
    hooks_file.write_text(json.dumps(theirs))
    change, hooks_change = _run(world, "install", "codex")
    assert change["changed"] and change["backup"] and hooks_change["changed"]
    assert open_counter(world.home / RANKS_FILE) is not None
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG)
    server = tomllib.loads(text)["mcp_servers"]["fleetmem"]
    assert server["args"] == ["mcp", "--attach", "codex"]
    assert server["env_vars"] == ["FLEETMEM_RUN_TOKEN", "FLEETMEM_RUN_ID"]
    assert server["env"] == {"FLEETMEM_HOME": str(world.home)}
    hooks = json.loads(hooks_file.read_text())["hooks"]
    assert hooks["Stop"] == theirs["hooks"]["Stop"]
    assert hooks["PostToolUse"][0] == theirs["hooks"]["PostToolUse"][0]
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"):
        [ours] = [h for g in hooks[event] for h in g["hooks"] if " hook codex " in h["command"]]
        assert ours["command"].endswith(f" hook codex {event}")
        assert f"--home {world.home}" in ours["command"]
    assert hooks["SessionEnd"][-1]["hooks"][0]["timeout"] == 3  # Codex's own cap
    again = _run(world, "install", "codex")
    assert not any(c["changed"] for c in again) and config.read_text() == text
    _run(world, "uninstall", "codex")
    assert config.read_text() == CODEX_CONFIG
    assert json.loads(hooks_file.read_text()) == theirs


def test_install_codex_hooks_file_it_created_goes_with_uninstall(world: World) -> None:
    world.config("")
    codex_home = world.tmp / "codex"
    _run(world, "install", "codex", "--agent", "reviewer")
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"}
    assert hooks["PostToolUse"][0]["matcher"] == "Bash"
    assert hooks["SessionStart"][0]["hooks"][0]["command"].endswith("--agent reviewer")
    changes = _run(world, "uninstall", "codex")
    assert {c["path"]: c["removed"] for c in changes}[str(codex_home / "hooks.json")]
    assert not (codex_home / "hooks.json").exists()
    proc = subprocess.run([FLEETMEM, "install", "codex", "--scope", "project"],
                          env=env_for(world.home, CODEX_HOME=str(codex_home)),
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 2 and "--scope project applies to claude-code only" in proc.stderr


def test_install_codex_replaces_an_earlier_table_in_the_middle(world: World) -> None:
    world.config("")
    config = world.tmp / "codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '[mcp_servers.fleetmem]\ncommand = "/old/fleetmem"\n\n'
        '[mcp_servers.fleetmem.env]\nX = "1"\n\n[tui]\nnotifications = true\n'
    )
    _run(world, "install", "codex")
    data = tomllib.loads(config.read_text())
    assert data["tui"] == {"notifications": True}
    assert data["mcp_servers"]["fleetmem"]["command"] != "/old/fleetmem"
    assert "X" not in data["mcp_servers"]["fleetmem"].get("env", {})


def test_an_entry_from_before_attach_is_upgraded_and_removed_as_fleetmems(world: World) -> None:
    world.config("")
    mcp = world.repo / ".mcp.json"
    legacy = {"type": "stdio", "command": FLEETMEM, "args": ["mcp"]}
    mcp.write_text(json.dumps({"mcpServers": {"fleetmem": legacy, "other": {"command": "x"}}}))
    _run(world, "install", "claude-code", "--scope", "project")
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["fleetmem"]["args"] == ["mcp", "--attach", "claude-code"]
    mcp.write_text(json.dumps({"mcpServers": {"fleetmem": legacy, "other": {"command": "x"}}}))
    _run(world, "uninstall", "claude-code", "--scope", "project")
    assert json.loads(mcp.read_text()) == {"mcpServers": {"other": {"command": "x"}}}


ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "claude"


def _doc_blocks(page: str, language: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return [body for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.M | re.S)
            if lang == language]  # fmt: skip


def test_the_docs_claude_code_recipes_match_what_install_writes(world: World) -> None:
    """docs/mcp.md's `claude mcp add-json` line, run with the real Claude Code CLI, and its
    `.mcp.json` snippet both give the server entry `fleetmem install` writes."""
    world.config("")
    _run(world, "install", "claude-code", "--scope", "project")
    installed = json.loads((world.repo / ".mcp.json").read_text())["mcpServers"]["fleetmem"]
    _run(world, "uninstall", "claude-code", "--scope", "project")

    [snippet] = [b for b in _doc_blocks("mcp.md", "json") if '"mcpServers"' in b]
    assert json.loads(snippet)["mcpServers"]["fleetmem"] == installed
    [add] = [ln for b in _doc_blocks("mcp.md", "sh") for ln in b.splitlines()
             if ln.startswith("claude mcp add-json ")]  # fmt: skip
    assert CLAUDE.exists(), f"{CLAUDE} is missing: `make test` installs it with npm"
    user = world.tmp / "claude-user"
    user.mkdir()
    ran = subprocess.run(
        shlex.split(add.replace("claude", str(CLAUDE), 1)),
        cwd=world.repo,
        env={"HOME": str(user), "PATH": os.environ["PATH"], "DISABLE_AUTOUPDATER": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    state = json.loads((user / ".claude.json").read_text())
    added = state["projects"][str(world.repo)]["mcpServers"]["fleetmem"]
    assert {k: v for k, v in added.items() if v != {}} == installed


def test_install_keeps_the_hooks_compiled_dataclass_methods(world: World) -> None:
    """The first session's hooks then read the methods the install compiled
    (fleetmem.dataclass_cache) instead of compiling them."""
    import subprocess

    from fleetmem.dataclass_cache import cache_folder, read_table
    from tests.surfaces.cli_helpers import env_for

    cache_home = world.tmp / "cache"
    env = env_for(world.home, HOME=str(world.tmp), XDG_CACHE_HOME=str(cache_home))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for integration in ("claude-code", "codex"):
        subprocess.run(
            [FLEETMEM, "install", integration, "--json"], env=env, cwd=world.repo,
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
    folder = cache_folder({"XDG_CACHE_HOME": str(cache_home)})
    kept = {p.stem for p in folder.glob("*.marshal")}
    # Modules only the hooks load (the install itself never defines their classes).
    for module in ("fleetmem.integrations.hookstate", "fleetmem.integrations.attach"):
        assert module in kept and read_table(folder / f"{module}.marshal")
    # Where Python may not write bytecode, nothing is kept.
    quiet = world.tmp / "quiet-cache"
    env.update({"XDG_CACHE_HOME": str(quiet), "PYTHONDONTWRITEBYTECODE": "1"})
    subprocess.run(
        [FLEETMEM, "install", "claude-code", "--json"], env=env, cwd=world.repo,
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert not quiet.exists()


def test_install_keeps_the_hooks_patterns_compiled_for_their_first_event(world: World) -> None:
    """The capture rules and the redactor's patterns are compiled by `install` and kept
    (fleetmem.pattern_cache), so the first prompt that asks to remember something does not
    compile them; nothing is kept where Python may not write bytecode."""
    from fleetmem import pattern_cache
    from fleetmem.core import capture_patterns

    def install(cache: Path, **extra: str) -> None:
        env = env_for(
            world.home, HOME=str(world.tmp), CODEX_HOME=str(world.tmp / "codex"),
            XDG_CACHE_HOME=str(cache), **extra,
        )  # fmt: skip
        if "PYTHONDONTWRITEBYTECODE" not in extra:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [FLEETMEM, "install", "claude-code", "--json"], env=env, cwd=world.repo,
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip

    install(world.tmp / "cache")
    (kept,) = (world.tmp / "cache" / "fleetmem").glob("patterns-*.marshal")
    sources = {source for source, _ in pattern_cache.read_table(kept)}
    assert {capture_patterns.TRIGGER._source, capture_patterns.HINT._source} <= sources
    assert len(sources) >= 100  # the redactor's too (fleetmem defines about 110 in all)

    install(world.tmp / "unwritten", PYTHONDONTWRITEBYTECODE="1")
    assert not list((world.tmp / "unwritten").glob("fleetmem/patterns-*"))
