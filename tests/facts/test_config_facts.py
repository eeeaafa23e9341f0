"""``[memory.facts]``, ``[memory.facts.thresholds.NAME]`` and ``[agent.NAME] memory_recall``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetmem.config import FactSettings, FactThresholds, load_global, load_settings
from fleetmem.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "fleetmem.toml").write_text(text, encoding="utf-8")
    return path


def test_defaults(tmp_path: Path) -> None:
    settings = load_global(tmp_path)
    assert settings.memory.facts == FactSettings()
    assert settings.memory.facts.promotion == "human"
    assert settings.agent("any").memory_recall is True


def test_every_key(tmp_path: Path) -> None:
    home = write(
        tmp_path,
        '[memory.facts]\npromotion = "corroboration"\ncorroboration_runs = 4\n'
        'corroboration_agents = 3\nsuspect_contradictions = 5\nrecall_timeout = "1500ms"\n'
        '[memory.facts.thresholds."local:minilm"]\nsearch = 0.3\nrecall = 0.5\n'
        "near_duplicate = 0.8\n"
        '[memory.facts.thresholds."text-embedding-3-small"]\nsearch = 0.4\n'
        "[agent.quiet]\nmemory_recall = false\n",
    )
    facts = load_global(home).memory.facts
    assert (facts.promotion, facts.corroboration_runs, facts.corroboration_agents) == (
        "corroboration",
        4,
        3,
    )
    assert (facts.suspect_contradictions, facts.recall_timeout_s) == (5, 1.5)
    assert facts.thresholds == {
        "local:minilm": FactThresholds(search=0.3, recall=0.5, near_duplicate=0.8),
        "text-embedding-3-small": FactThresholds(search=0.4),
    }
    assert load_global(home).agent("quiet").memory_recall is False


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[memory.facts]\npromotion = "votes"\n', "memory.facts.promotion"),
        ("[memory.facts]\ncorroboration_runs = 0\n", "memory.facts.corroboration_runs"),
        ('[memory.facts]\nrecall_timeout = "30s"\n', "memory.facts.recall_timeout"),
        ("[memory.facts]\nblock_tokens = 5000\n", "memory.facts.block_tokens"),
        ('[memory.facts.thresholds."m"]\nsearch = 1.5\n', "memory.facts.thresholds.m.search"),
        ('[memory.facts.thresholds."m"]\nrecall = true\n', "memory.facts.thresholds.m.recall"),
        ('[memory.facts.thresholds."a b"]\nsearch = 0.5\n', "memory.facts.thresholds.NAME"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_global(write(tmp_path, text))
    assert info.value.key == key


def test_a_project_file_may_only_turn_recall_off(tmp_path: Path) -> None:
    home = write(tmp_path / "home", '[memory.facts.thresholds."local:minilm"]\nsearch = 0.3\n')
    repo = write(tmp_path / "repo", "")
    (repo / ".fleetmem.toml").write_text("[agent.bot]\nmemory_recall = false\n", encoding="utf-8")
    settings = load_settings(home, repo)
    assert settings.agent("bot").memory_recall is False
    assert settings.memory.facts.thresholds["local:minilm"].search == 0.3  # survives the layer
    (repo / ".fleetmem.toml").write_text("[agent.bot]\nmemory_recall = true\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="narrow"):
        load_settings(home, repo)
    (repo / ".fleetmem.toml").write_text('[memory.facts]\npromotion = "human"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="global-only"):
        load_settings(home, repo)
