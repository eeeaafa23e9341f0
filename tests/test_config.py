"""Layered TOML configuration: defaults, every key, layering, narrowing and reload."""

from __future__ import annotations

import dataclasses
import os
import re
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem.config import (
    AgentSettings,
    ConfigHolder,
    EpisodeSettings,
    ModelApiSettings,
    Settings,
    apply_project,
    default_home,
    default_settings,
    load_global,
    load_settings,
)
from fleetmem.errors import ConfigError

DAY = 86_400.0


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


def toml_string(text: str) -> str:
    """A TOML basic string for ``text`` with every non-ASCII character escaped."""
    escaped = "".join(
        char if " " <= char <= "~" and char not in '"\\' else f"\\U{ord(char):08x}" for char in text
    )
    return f'"{escaped}"'


def global_file(home: Path, text: str) -> Path:
    return write(home / "fleetmem.toml", text)


def dropin(home: Path, name: str, text: str) -> Path:
    return write(home / "fleetmem.d" / name, text)


def project_file(repo: Path, text: str) -> Path:
    return write(repo / ".fleetmem.toml", text)


def load_error(home: Path, project_root: Path | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_settings(home, project_root)
    return info.value


def assert_names(error: ConfigError, key: str, value: object, source: Path) -> None:
    """The message names the dotted key, the value and the file, as users read it."""
    message = str(error)
    assert error.key == key
    assert message.startswith(f"{key} = ")
    assert repr(value)[:60] in message
    assert error.source == str(source)
    assert str(source) in message


# --------------------------------------------------------------------------- defaults


def test_no_files_gives_defaults(home: Path, repo: Path) -> None:
    settings = load_settings(home, repo)
    assert settings == default_settings()
    assert settings.sources == ()
    assert settings.memory.provider == "builtin"
    assert settings.memory.episodes == EpisodeSettings(
        retention_s=90 * DAY, summary=True, provider_timeout_s=2.0, excerpt_chars=600
    )
    assert settings.model_api == ModelApiSettings(
        base_url=None, api_key_env=None, utility_model=None, embedding_model="local:minilm"
    )
    assert dict(settings.agents) == {}
    assert dict(settings.origins) == {}


def test_undeclared_agent_gets_defaults(home: Path) -> None:
    agent = load_global(home).agent("codex")
    assert agent == AgentSettings(
        name="codex", memory_record=True, record_trace=True, untrusted_inline=False
    )


def test_settings_are_frozen_and_agents_read_only(home: Path) -> None:
    global_file(home, "[agent.scratch]\nmemory_record = false\n")
    settings = load_global(home)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.memory = settings.memory  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.agents["other"] = AgentSettings(name="other")  # type: ignore[index]


def test_empty_files_are_fine(home: Path) -> None:
    global_file(home, "")
    dropin(home, "10-empty.toml", "# nothing\n")
    settings = load_global(home)
    assert dataclasses.replace(settings, sources=()) == default_settings()
    assert len(settings.sources) == 2


# --------------------------------------------------------------------------- every key, valid


@pytest.mark.parametrize(
    ("text", "read", "expected"),
    [
        ('[memory]\nprovider = "builtin"', lambda s: s.memory.provider, "builtin"),
        ('[memory.episodes]\nretention = "30d"', lambda s: s.memory.episodes.retention_s, 30 * DAY),
        ('[memory.episodes]\nretention = "1h"', lambda s: s.memory.episodes.retention_s, 3600.0),
        (
            '[memory.episodes]\nretention = "10y"',
            lambda s: s.memory.episodes.retention_s,
            3650 * DAY,
        ),
        (
            '[memory.episodes]\nretention = "1d12h"',
            lambda s: s.memory.episodes.retention_s,
            1.5 * DAY,
        ),
        ("[memory.episodes]\nsummary = false", lambda s: s.memory.episodes.summary, False),
        (
            '[memory.episodes]\nprovider_timeout = "100ms"',
            lambda s: s.memory.episodes.provider_timeout_s,
            0.1,
        ),
        (
            '[memory.episodes]\nprovider_timeout = "60s"',
            lambda s: s.memory.episodes.provider_timeout_s,
            60.0,
        ),
        (
            '[memory.episodes]\nprovider_timeout = "1m"',
            lambda s: s.memory.episodes.provider_timeout_s,
            60.0,
        ),
        ("[memory.episodes]\nexcerpt_chars = 0", lambda s: s.memory.episodes.excerpt_chars, 0),
        ("[memory.episodes]\nrecall_cues = []", lambda s: s.memory.episodes.recall_cues, ()),
        (
            '[memory.episodes]\nrecall_cues = ["follow_ups", "periods"]',
            lambda s: s.memory.episodes.recall_cues,
            ("follow_ups", "periods"),
        ),
        (
            "[memory.episodes]\nexcerpt_chars = 2000",
            lambda s: s.memory.episodes.excerpt_chars,
            2000,
        ),
        (
            "[agent.scratch]\nmemory_record = false",
            lambda s: s.agent("scratch").memory_record,
            False,
        ),
        ("[agent.scratch]\nrecord_trace = false", lambda s: s.agent("scratch").record_trace, False),
        (
            "[agent.scratch]\nuntrusted_inline = true",
            lambda s: s.agent("scratch").untrusted_inline,
            True,
        ),
        ("[agent.scratch]\nmemory_record = true", lambda s: s.agent("scratch").memory_record, True),
        (
            '[model_api]\nbase_url = "https://models.example/v1"',
            lambda s: s.model_api.base_url,
            "https://models.example/v1",
        ),
        (
            '[model_api]\nbase_url = "http://127.0.0.1:8080"',
            lambda s: s.model_api.base_url,
            "http://127.0.0.1:8080",
        ),
        (
            '[model_api]\napi_key_env = "OPENAI_API_KEY"',
            lambda s: s.model_api.api_key_env,
            "OPENAI_API_KEY",
        ),
        ('[model_api]\napi_key_env = "_k9"', lambda s: s.model_api.api_key_env, "_k9"),
        (
            '[model_api]\nbase_url = "http://127.0.0.1:1"\nutility_model = "qwen2.5:7b"',
            lambda s: s.model_api.utility_model,
            "qwen2.5:7b",
        ),
        ('[model_api]\nembedding_model = ""', lambda s: s.model_api.embedding_model, ""),
        (
            '[model_api]\nembedding_model = "local:minilm"',
            lambda s: s.model_api.embedding_model,
            "local:minilm",
        ),
        (
            '[model_api]\nbase_url = "http://127.0.0.1:1"\n'
            'embedding_model = "text-embedding-3-small"',
            lambda s: s.model_api.embedding_model,
            "text-embedding-3-small",
        ),
    ],
)
def test_each_key_accepts_valid_values(
    home: Path, text: str, read: Callable[[Settings], object], expected: object
) -> None:
    source = global_file(home, text + "\n")
    settings = load_global(home)
    assert read(settings) == expected
    assert settings.sources == (str(source),)
    assert set(settings.origins.values()) == {str(source)}


@pytest.mark.parametrize("name", ["a", "0", "api-fixer", "claude.code_2", "x" * 64, "9lives"])
def test_valid_agent_names(home: Path, name: str) -> None:
    global_file(home, f'[agent."{name}"]\n')
    assert load_global(home).agents[name] == AgentSettings(name=name)


# --------------------------------------------------------------------------- every key, invalid


@pytest.mark.parametrize(
    ("text", "key", "value", "reason"),
    [
        # recall_cues: an array of known cues, each once
        (
            '[memory.episodes]\nrecall_cues = ["periods", "names"]',
            "memory.episodes.recall_cues",
            ["periods", "names"],
            'unknown item "names": each must be one of "periods", "agents", "follow_ups"',
        ),
        (
            '[memory.episodes]\nrecall_cues = ["agents", "agents"]',
            "memory.episodes.recall_cues",
            ["agents", "agents"],
            '"agents" is listed twice',
        ),
        (
            '[memory.episodes]\nrecall_cues = "agents"',
            "memory.episodes.recall_cues",
            "agents",
            "expected an array of strings, got string",
        ),
        (
            "[memory.episodes]\nrecall_cues = [1]",
            "memory.episodes.recall_cues",
            [1],
            "expected an array of strings, got integer",
        ),
        # excerpt_chars: range and type (TOML booleans and floats are not integers)
        (
            "[memory.episodes]\nexcerpt_chars = 2001",
            "memory.episodes.excerpt_chars",
            2001,
            "must be an integer between 0 and 2000",
        ),
        (
            "[memory.episodes]\nexcerpt_chars = -1",
            "memory.episodes.excerpt_chars",
            -1,
            "must be an integer between 0 and 2000",
        ),
        (
            "[memory.episodes]\nexcerpt_chars = true",
            "memory.episodes.excerpt_chars",
            True,
            "expected an integer, got boolean",
        ),
        (
            "[memory.episodes]\nexcerpt_chars = 1.5",
            "memory.episodes.excerpt_chars",
            1.5,
            "expected an integer, got float",
        ),
        (
            "[memory.episodes]\nexcerpt_chars = 600.0",
            "memory.episodes.excerpt_chars",
            600.0,
            "expected an integer, got float",
        ),
        (
            '[memory.episodes]\nexcerpt_chars = "600"',
            "memory.episodes.excerpt_chars",
            "600",
            "expected an integer, got string",
        ),
        # retention
        (
            '[memory.episodes]\nretention = "59m"',
            "memory.episodes.retention",
            "59m",
            "must be between 1h and 10y",
        ),
        (
            '[memory.episodes]\nretention = "3651d"',
            "memory.episodes.retention",
            "3651d",
            "must be between 1h and 10y",
        ),
        ('[memory.episodes]\nretention = "90"', "memory.episodes.retention", "90", "missing unit"),
        (
            '[memory.episodes]\nretention = "90days"',
            "memory.episodes.retention",
            "90days",
            "unknown unit",
        ),
        ('[memory.episodes]\nretention = "-90d"', "memory.episodes.retention", "-90d", "negative"),
        ('[memory.episodes]\nretention = ""', "memory.episodes.retention", "", "empty"),
        ("[memory.episodes]\nretention = 90", "memory.episodes.retention", 90, "got integer"),
        (
            '[memory.episodes]\nretention = "1000y"',
            "memory.episodes.retention",
            "1000y",
            "100 years",
        ),
        # provider_timeout
        (
            '[memory.episodes]\nprovider_timeout = "99ms"',
            "memory.episodes.provider_timeout",
            "99ms",
            "must be between 100ms and 60s",
        ),
        (
            '[memory.episodes]\nprovider_timeout = "61s"',
            "memory.episodes.provider_timeout",
            "61s",
            "must be between 100ms and 60s",
        ),
        (
            '[memory.episodes]\nprovider_timeout = "1.5s"',
            "memory.episodes.provider_timeout",
            "1.5s",
            "fractions",
        ),
        (
            "[memory.episodes]\nprovider_timeout = 2",
            "memory.episodes.provider_timeout",
            2,
            "got integer",
        ),
        # summary
        (
            '[memory.episodes]\nsummary = "yes"',
            "memory.episodes.summary",
            "yes",
            "expected a boolean, got string",
        ),
        (
            "[memory.episodes]\nsummary = 1",
            "memory.episodes.summary",
            1,
            "expected a boolean, got integer",
        ),
        # agents
        (
            '[agent.scratch]\nmemory_record = "false"',
            "agent.scratch.memory_record",
            "false",
            "expected a boolean, got string",
        ),
        (
            "[agent.scratch]\nmemory_record = 0",
            "agent.scratch.memory_record",
            0,
            "expected a boolean, got integer",
        ),
        (
            "[agent.scratch]\nrecord_trace = []",
            "agent.scratch.record_trace",
            [],
            "expected a boolean, got array",
        ),
        (
            '[agent.scratch]\nuntrusted_inline = "true"',
            "agent.scratch.untrusted_inline",
            "true",
            "expected a boolean, got string",
        ),
        # model_api
        (
            '[model_api]\nbase_url = "ftp://models.example"',
            "model_api.base_url",
            "ftp://models.example",
            "http",
        ),
        ('[model_api]\nbase_url = "http://"', "model_api.base_url", "http://", "with a host"),
        (
            '[model_api]\nbase_url = "models.example/v1"',
            "model_api.base_url",
            "models.example/v1",
            "http",
        ),
        (
            '[model_api]\nbase_url = "http://models example"',
            "model_api.base_url",
            "http://models example",
            "without spaces",
        ),
        (
            '[model_api]\nbase_url = "http://u:p@models.example"',
            "model_api.base_url",
            "http://***@models.example",  # the userinfo is never echoed
            "credentials",
        ),
        (
            '[model_api]\nbase_url = "http://models.example:99999"',
            "model_api.base_url",
            "http://models.example:99999",
            "not a valid URL",
        ),
        (
            '[model_api]\nbase_url = "http://models.example/?k=v"',
            "model_api.base_url",
            "http://models.example/?k=v",
            "query",
        ),
        ("[model_api]\nbase_url = 8080", "model_api.base_url", 8080, "got integer"),
        ('[model_api]\nutility_model = ""', "model_api.utility_model", "", "must not be empty"),
        (
            '[model_api]\nembedding_model = "a\\u0007b"',
            "model_api.embedding_model",
            "a\ab",
            "control or invisible",
        ),
        # unknown keys and tables
        ('[memory]\nbackend = "x"', "memory.backend", "x", "unknown key"),
        ('[memory.episodes]\nretension = "9d"', "memory.episodes.retension", "9d", "unknown key"),
        ('[agent.scratch]\nharness = "codex"', "agent.scratch.harness", "codex", "unknown key"),
        ("verbose = true", "verbose", True, "unknown key"),
        ('[mcp.mem0]\ncommand = "mem0"\nport = 1', "mcp.mem0.port", 1, "unknown key"),
        ("[facts]\n", "facts", "<table>", "unknown table"),
        ("[memory.extra]\n", "memory.extra", "<table>", "unknown table"),
        ("[memory]\nepisodes = 3", "memory.episodes", 3, "expected a table [memory.episodes]"),
        (
            "[agent]\nmemory_record = false",
            "agent.memory_record",
            False,
            "expected a table [agent.NAME], got boolean",
        ),
        ("agent = 1", "agent", 1, "expected a table [agent], got integer"),
    ],
)
def test_bad_values_name_key_value_reason_and_file(
    home: Path, text: str, key: str, value: object, reason: str
) -> None:
    source = global_file(home, text + "\n")
    error = load_error(home)
    assert_names(error, key, value, source)
    assert reason in error.reason


def test_api_key_pasted_as_env_name_is_not_echoed(home: Path) -> None:
    secret = "sk-" + "A1b2" * 10
    source = global_file(home, f'[model_api]\napi_key_env = "{secret}"\n')
    error = load_error(home)
    assert error.key == "model_api.api_key_env"
    assert error.source == str(source)
    assert "environment variable" in error.reason
    assert secret not in str(error)
    assert secret not in repr(error.value)


@pytest.mark.parametrize("name", ["1ABC", "MY-KEY", "KEY NAME", ""])
def test_api_key_env_must_be_a_variable_name(home: Path, name: str) -> None:
    global_file(home, f'[model_api]\napi_key_env = "{name}"\n')
    assert load_error(home).key == "model_api.api_key_env"


@pytest.mark.parametrize(
    "name",
    [
        "Scratch",  # upper case
        "-scratch",  # must start with a letter or digit
        ".hidden",
        "x" * 65,  # too long
        "scr\u200batch",  # zero-width space
        "scratch\u200d",  # zero-width joiner
        "\ufeffscratch",  # byte order mark
        "ｓcratch",  # full-width s
        "scrаtch",  # Cyrillic a
        "scratch/../x",
        "",
    ],
)
def test_bad_agent_names_fail(home: Path, name: str) -> None:
    source = global_file(home, f"[agent.{toml_string(name)}]\nmemory_record = false\n")
    error = load_error(home)
    assert_names(error, "agent.NAME", name, source)
    assert "[a-z0-9][a-z0-9._-]{0,63}" in error.reason


def test_invisible_characters_in_a_key_are_shown_escaped(home: Path) -> None:
    global_file(home, '[memory.episodes]\n"retention\\u200b" = "9d"\n')
    error = load_error(home)
    assert error.key == 'memory.episodes."retention\\u200b"'
    assert "unknown key" in str(error)


@pytest.mark.parametrize(
    "duration",
    [
        "\uff19\uff10d",  # full-width 90
        "\u0669\u0660d",  # Arabic-Indic 90
        "9\u200b0d",  # zero-width space inside
        "90\u00a0d",  # no-break space
        "90d ",
    ],
)
def test_unicode_tricks_in_durations_fail(home: Path, duration: str) -> None:
    source = global_file(home, f"[memory.episodes]\nretention = {toml_string(duration)}\n")
    error = load_error(home)
    assert_names(error, "memory.episodes.retention", duration, source)
    assert "not a duration" in error.reason


# --------------------------------------------------------------------------- provider


def test_provider_other_than_builtin_fails(home: Path) -> None:
    source = global_file(home, '[memory]\nprovider = "mem0"\n')
    error = load_error(home)
    assert_names(error, "memory.provider", "mem0", source)
    assert error.reason == "no [mcp.NAME] upstream is declared in the global file or a drop-in"


def test_provider_set_in_a_dropin_names_the_dropin(home: Path) -> None:
    global_file(home, '[memory]\nprovider = "builtin"\n')
    source = dropin(home, "50-zep.toml", '[memory]\nprovider = "zep"\n')
    assert_names(load_error(home), "memory.provider", "zep", source)


def test_no_memory_table_means_builtin(home: Path) -> None:
    global_file(home, "[agent.scratch]\n")
    assert load_global(home).memory.provider == "builtin"


# --------------------------------------------------------------------------- model_api links


def test_utility_model_requires_base_url(home: Path) -> None:
    source = global_file(home, '[model_api]\nutility_model = "gpt-4o-mini"\n')
    error = load_error(home)
    assert_names(error, "model_api.utility_model", "gpt-4o-mini", source)
    assert "base_url" in error.reason


def test_remote_embedding_model_requires_base_url(home: Path) -> None:
    source = global_file(home, '[model_api]\nembedding_model = "text-embedding-3-small"\n')
    error = load_error(home)
    assert_names(error, "model_api.embedding_model", "text-embedding-3-small", source)
    assert "base_url" in error.reason


def test_base_url_from_a_dropin_satisfies_the_global_model(home: Path) -> None:
    global_file(home, '[model_api]\nutility_model = "m"\n')
    dropin(home, "10-endpoint.toml", '[model_api]\nbase_url = "http://127.0.0.1:9"\n')
    api = load_global(home).model_api
    assert (api.base_url, api.utility_model) == ("http://127.0.0.1:9", "m")


# --------------------------------------------------------------------------- drop-ins


def test_dropins_apply_in_lexical_order_key_by_key(home: Path) -> None:
    main = global_file(
        home,
        """
        [memory.episodes]
        retention = "30d"
        excerpt_chars = 100
        [agent.scratch]
        untrusted_inline = true
        """,
    )
    late = dropin(home, "20-late.toml", "[memory.episodes]\nexcerpt_chars = 300\n")
    early = dropin(
        home,
        "10-early.toml",
        "[memory.episodes]\nexcerpt_chars = 200\nsummary = false\n"
        "[agent.scratch]\nmemory_record = false\n",
    )
    settings = load_global(home)
    assert settings.sources == (str(main), str(early), str(late))
    episodes = settings.memory.episodes
    assert (episodes.retention_s, episodes.excerpt_chars, episodes.summary) == (
        30 * DAY,
        300,
        False,
    )
    assert settings.agent("scratch") == AgentSettings(
        name="scratch", memory_record=False, untrusted_inline=True
    )
    assert settings.origins["memory.episodes.retention"] == str(main)
    assert settings.origins["memory.episodes.summary"] == str(early)
    assert settings.origins["memory.episodes.excerpt_chars"] == str(late)


def test_lexical_order_is_by_name_not_number(home: Path) -> None:
    dropin(home, "9-x.toml", "[memory.episodes]\nexcerpt_chars = 9\n")
    dropin(home, "10-x.toml", "[memory.episodes]\nexcerpt_chars = 10\n")
    assert load_global(home).memory.episodes.excerpt_chars == 9


def test_dropins_without_a_global_file(home: Path) -> None:
    dropin(home, "10-a.toml", "[agent.codex]\nrecord_trace = false\n")
    assert load_global(home).agent("codex").record_trace is False


def test_only_toml_dropins_and_no_dotfiles(home: Path) -> None:
    dropin(home, "10-a.toml", "[memory.episodes]\nexcerpt_chars = 1\n")
    dropin(home, "20-b.toml.bak", "[memory.episodes]\nexcerpt_chars = 2\n")
    dropin(home, ".30-c.toml", "[memory.episodes]\nsummary = false\n")
    dropin(home, "README", "not toml at all [")
    (home / "fleetmem.d" / "40-dir.toml").mkdir()
    settings = load_global(home)
    assert settings.memory.episodes.excerpt_chars == 1
    assert settings.memory.episodes.summary is True
    assert len(settings.sources) == 1


def test_an_error_in_a_dropin_names_the_dropin(home: Path) -> None:
    global_file(home, "[memory.episodes]\nexcerpt_chars = 5\n")
    source = dropin(home, "10-bad.toml", "[memory.episodes]\nexcerpt_chars = 5000\n")
    assert_names(load_error(home), "memory.episodes.excerpt_chars", 5000, source)


def test_dropin_directory_that_is_a_file_fails(home: Path) -> None:
    write(home / "fleetmem.d", "")
    assert "directory" in load_error(home).reason


# --------------------------------------------------------------------------- project files


def test_absent_project_file_returns_settings_unchanged(home: Path, repo: Path) -> None:
    settings = load_global(home)
    assert apply_project(settings, repo) is settings
    assert apply_project(settings, repo / "missing") is settings


def test_project_may_narrow_to_false(home: Path, repo: Path) -> None:
    global_file(home, "[agent.scratch]\nuntrusted_inline = true\n")
    source = project_file(
        repo,
        """
        [agent.scratch]
        memory_record = false
        [agent.local-only]
        record_trace = false
        """,
    )
    settings = load_settings(home, repo)
    assert settings.agent("scratch") == AgentSettings(
        name="scratch", memory_record=False, untrusted_inline=True
    )
    assert settings.agent("local-only").record_trace is False
    assert settings.sources[-1] == str(source)
    assert settings.origins["agent.scratch.memory_record"] == str(source)


def test_project_applies_on_top_of_a_loaded_global(home: Path, repo: Path) -> None:
    global_file(home, "[memory.episodes]\nexcerpt_chars = 7\n")
    project_file(repo, "[agent.scratch]\nrecord_trace = false\n")
    base = load_global(home)
    narrowed = apply_project(base, repo)
    assert narrowed.memory == base.memory
    assert base.agent("scratch").record_trace is True
    assert narrowed.agent("scratch").record_trace is False


@pytest.mark.parametrize("key", ["memory_record", "record_trace"])
def test_project_may_not_widen(home: Path, repo: Path, key: str) -> None:
    global_file(home, f"[agent.scratch]\n{key} = false\n")
    source = project_file(repo, f"[agent.scratch]\n{key} = true\n")
    error = load_error(home, repo)
    assert_names(error, f"agent.scratch.{key}", True, source)
    assert f"a project file may only narrow {key} to false" in error.reason


def test_project_narrowing_still_type_checks(home: Path, repo: Path) -> None:
    source = project_file(repo, '[agent.scratch]\nmemory_record = "false"\n')
    error = load_error(home, repo)
    assert_names(error, "agent.scratch.memory_record", "false", source)
    assert "expected a boolean" in error.reason


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ('[memory]\nprovider = "builtin"', "memory.provider", "builtin"),
        ('[memory.episodes]\nretention = "1d"', "memory.episodes", "<table>"),
        ("[memory.episodes]\nexcerpt_chars = 10", "memory.episodes", "<table>"),
        ("[memory]\n", "memory", "<table>"),
        (
            '[model_api]\nbase_url = "http://127.0.0.1:1"',
            "model_api.base_url",
            "http://127.0.0.1:1",
        ),
        ('[model_api]\nembedding_model = ""', "model_api.embedding_model", ""),
        ("[agent.scratch]\nuntrusted_inline = true", "agent.scratch.untrusted_inline", True),
        ("[agent.scratch]\nuntrusted_inline = false", "agent.scratch.untrusted_inline", False),
    ],
)
def test_global_only_keys_fail_in_a_project_file(
    home: Path, repo: Path, text: str, key: str, value: object
) -> None:
    source = project_file(repo, text + "\n")
    error = load_error(home, repo)
    assert_names(error, key, value, source)
    assert "global-only" in error.reason


def test_project_unknown_key_fails(home: Path, repo: Path) -> None:
    source = project_file(repo, "[agent.scratch]\nmemory_briefing = true\n")
    assert_names(load_error(home, repo), "agent.scratch.memory_briefing", True, source)


# --------------------------------------------------------------- memory_record vs record_trace


def test_memory_record_true_on_an_untraced_agent_fails(home: Path) -> None:
    source = global_file(home, "[agent.scratch]\nrecord_trace = false\nmemory_record = true\n")
    error = load_error(home)
    assert_names(error, "agent.scratch.memory_record", True, source)
    assert "would do nothing" in error.reason
    assert "record_trace" in error.reason


def test_record_trace_false_in_a_dropin_conflicts_with_global_memory_record(home: Path) -> None:
    source = global_file(home, "[agent.scratch]\nmemory_record = true\n")
    dropin(home, "10-quiet.toml", "[agent.scratch]\nrecord_trace = false\n")
    assert_names(load_error(home), "agent.scratch.memory_record", True, source)


def test_record_trace_false_in_a_project_conflicts_with_global_memory_record(
    home: Path, repo: Path
) -> None:
    source = global_file(home, "[agent.scratch]\nmemory_record = true\n")
    project_file(repo, "[agent.scratch]\nrecord_trace = false\n")
    assert_names(load_error(home, repo), "agent.scratch.memory_record", True, source)


def test_untraced_agent_without_explicit_memory_record_is_fine(home: Path) -> None:
    global_file(home, "[agent.scratch]\nrecord_trace = false\n[agent.other]\n")
    dropin(home, "10.toml", "[agent.other]\nrecord_trace = false\nmemory_record = false\n")
    settings = load_global(home)
    assert settings.agent("scratch").record_trace is False
    assert settings.agent("other").memory_record is False


def test_memory_record_true_overridden_to_false_is_fine(home: Path) -> None:
    # The rule applies to the effective explicit value: a later layer that turns it off wins.
    global_file(home, "[agent.scratch]\nmemory_record = true\n")
    dropin(home, "10.toml", "[agent.scratch]\nmemory_record = false\nrecord_trace = false\n")
    assert load_global(home).agent("scratch").memory_record is False


# --------------------------------------------------------------------------- file-level errors


def test_toml_syntax_error_names_the_file_and_position(home: Path) -> None:
    source = global_file(home, "[memory.episodes]\nexcerpt_chars = = 5\n")
    error = load_error(home)
    assert error.key == "<file>"
    assert error.source == str(source)
    assert str(source) in str(error)
    assert "line 2, column" in str(error)


def test_toml_syntax_error_in_dropin_and_project(home: Path, repo: Path) -> None:
    source = dropin(home, "10-x.toml", "[agent.scratch\n")
    assert load_error(home).source == str(source)
    (home / "fleetmem.d" / "10-x.toml").unlink()
    source = project_file(repo, "[agent.scratch]\nmemory_record = fals\n")
    error = load_error(home, repo)
    assert error.source == str(source)
    assert "line 2" in str(error)


def test_duplicate_keys_are_a_syntax_error(home: Path) -> None:
    global_file(home, "[memory.episodes]\nexcerpt_chars = 1\nexcerpt_chars = 2\n")
    assert load_error(home).key == "<file>"


def test_non_utf8_file_fails_naming_the_file(home: Path) -> None:
    path = home / "fleetmem.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'[memory]\nprovider = "\xff"\n')
    error = load_error(home)
    assert (error.key, error.source) == ("<file>", str(path))
    assert "UTF-8" in error.reason


def test_unreadable_global_file_fails(home: Path) -> None:
    (home / "fleetmem.toml").mkdir(parents=True)
    error = load_error(home)
    assert error.key == "<file>"
    assert "cannot read" in error.reason


# --------------------------------------------------------------------------- ConfigHolder


def test_holder_keeps_last_good_settings_on_a_bad_reload(home: Path) -> None:
    global_file(home, "[memory.episodes]\nexcerpt_chars = 100\n")
    holder = ConfigHolder(home)
    good = holder.current
    assert good.memory.episodes.excerpt_chars == 100

    source = global_file(home, '[memory]\nprovider = "mem0"\n')
    error = holder.reload()
    assert isinstance(error, ConfigError)
    assert error.key == "memory.provider"
    assert error.source == str(source)
    assert holder.current is good

    global_file(home, "[memory.episodes]\nexcerpt_chars = 200\n")
    assert holder.reload() is None
    assert holder.current.memory.episodes.excerpt_chars == 200


def test_holder_reloads_only_what_changed(home: Path) -> None:
    source = global_file(home, "[memory.episodes]\nexcerpt_chars = 100\n")
    holder = ConfigHolder(home)
    first = holder.current
    assert holder.reload_if_changed() is None
    assert holder.current is first  # nothing changed: nothing was read again

    global_file(home, "[memory.episodes]\nexcerpt_chars = 250\n")
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    assert holder.reload_if_changed() is None
    assert holder.current.memory.episodes.excerpt_chars == 250

    dropin = home / "fleetmem.d"
    dropin.mkdir()
    (dropin / "10-more.toml").write_text("[memory.episodes]\nexcerpt_chars = -5\n")
    error = holder.reload_if_changed()
    assert isinstance(error, ConfigError) and error.key == "memory.episodes.excerpt_chars"
    assert holder.current.memory.episodes.excerpt_chars == 250  # the last good ones kept
    assert isinstance(holder.reload_if_changed(), ConfigError)  # asked again until mended
    (dropin / "10-more.toml").unlink()
    assert holder.reload_if_changed() is None
    assert holder.current.memory.episodes.excerpt_chars == 250


def test_holder_applies_its_project(home: Path, repo: Path) -> None:
    project_file(repo, "[agent.scratch]\nmemory_record = false\n")
    assert ConfigHolder(home, repo).current.agent("scratch").memory_record is False


def test_holder_refuses_to_start_on_bad_config(home: Path) -> None:
    global_file(home, "[memory.episodes]\nexcerpt_chars = -5\n")
    with pytest.raises(ConfigError):
        ConfigHolder(home)


def test_holder_reload_is_safe_under_concurrent_readers(home: Path) -> None:
    global_file(home, "[memory.episodes]\nexcerpt_chars = 1\n")
    holder = ConfigHolder(home)
    seen: set[int] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            current = holder.current
            assert isinstance(current, Settings)
            seen.add(current.memory.episodes.excerpt_chars)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for thread in readers:
        thread.start()
    results = []
    for value in (2, -1, 3, 9999, 4):
        global_file(home, f"[memory.episodes]\nexcerpt_chars = {value}\n")
        reloaders = [
            threading.Thread(target=lambda: results.append(holder.reload())) for _ in range(3)
        ]
        for thread in reloaders:
            thread.start()
        for thread in reloaders:
            thread.join()
    stop.set()
    for thread in readers:
        thread.join()
    assert holder.current.memory.episodes.excerpt_chars == 4
    assert seen <= {1, 2, 3, 4}
    assert sum(isinstance(r, ConfigError) for r in results) == 6


# --------------------------------------------------------------------------- default_home


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"FLEETMEM_HOME": "/srv/fleetmem", "HOME": "/home/u"}, Path("/srv/fleetmem")),
        ({"FLEETMEM_HOME": "~/fm", "HOME": "/home/u"}, Path("/home/u/fm")),
        ({"FLEETMEM_HOME": "~", "HOME": "/home/u"}, Path("/home/u")),
        ({"HOME": "/home/u"}, Path("/home/u/.fleetmem")),
        ({"FLEETMEM_HOME": "", "HOME": "/home/u"}, Path("/home/u/.fleetmem")),
        ({"FLEETMEM_HOME": "relative/dir", "HOME": "/home/u"}, Path("relative/dir")),
    ],
)
def test_default_home(environ: dict[str, str], expected: Path) -> None:
    assert default_home(environ) == expected


def test_default_home_without_home_variable_uses_the_account() -> None:
    path = default_home({})
    assert path.name == ".fleetmem"
    assert path.is_absolute()


# --------------------------------------------------------------------------- docs stay honest


def test_examples_in_the_configuration_docs_load(home: Path, repo: Path) -> None:
    docs = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
    blocks = re.findall(r"```toml\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 3
    for number, block in enumerate(blocks):
        first_line = block.splitlines()[0]
        if ".fleetmem.toml" in first_line:
            project_file(repo, block)
        elif "fleetmem.d" in first_line:
            dropin(home, f"{number:02d}.toml", block)
        else:
            global_file(home, block)
    settings = load_settings(home, repo)
    assert len(settings.sources) == 3
    assert settings.memory.episodes.retention_s == 180 * DAY
    assert settings.agent("codex").memory_record is False


def test_credential_keys_and_url_userinfo_are_never_echoed(home: Path) -> None:
    import secrets

    password = secrets.token_urlsafe(12)
    cases = [
        (f'[model_api]\nbase_url = "https://app:{password}@models.example/v1"', "base_url"),
        (f'[model_api]\napi_key = "{password}"', "model_api.api_key"),
        (f'[server]\nsigning_secret = "{password}"', "server.signing_secret"),
        (f'[model_api]\ndb_password = "{password}"', "model_api.db_password"),
        (f'[model_api]\napi_key_env = "{password}-not-a-name"', "model_api.api_key_env"),
    ]
    for text, key in cases:
        global_file(home, text + "\n")
        error = load_error(home)
        assert key in str(error)
        assert password not in str(error), text
