"""The configuration keys of runs and briefings: ranges, defaults and where they may be set."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetmem.config import apply_project, load_global
from fleetmem.errors import ConfigError


def write(home: Path, text: str) -> None:
    (home / "fleetmem.toml").write_text(text, encoding="utf-8")


def test_defaults(tmp_path: Path) -> None:
    settings = load_global(tmp_path)
    assert settings.agent("anyone").briefing_max_chars == 2000
    assert settings.runs.expire_after_s == 600.0


@pytest.mark.parametrize("value", [500, 2000, 4000])
def test_briefing_max_chars_in_range(tmp_path: Path, value: int) -> None:
    write(tmp_path, f"[agent.api-fixer]\nbriefing_max_chars = {value}\n")
    assert load_global(tmp_path).agent("api-fixer").briefing_max_chars == value


@pytest.mark.parametrize("value", ["10000", "499", "4001", "0", "2000.0", '"2000"', "true"])
def test_briefing_max_chars_out_of_range_fails_naming_key_and_range(
    tmp_path: Path, value: str
) -> None:
    write(tmp_path, f"[agent.api-fixer]\nbriefing_max_chars = {value}\n")
    with pytest.raises(ConfigError) as info:
        load_global(tmp_path)
    assert info.value.key == "agent.api-fixer.briefing_max_chars"
    message = str(info.value)
    assert "agent.api-fixer.briefing_max_chars" in message
    if value in ("10000", "499", "4001", "0"):
        assert "between 500 and 4000" in message


def test_expire_after_is_a_global_duration(tmp_path: Path) -> None:
    write(tmp_path, '[runs]\nexpire_after = "90s"\n')
    assert load_global(tmp_path).runs.expire_after_s == 90.0
    for bad in ('"10s"', '"25h"', "600", '"ten minutes"'):
        write(tmp_path, f"[runs]\nexpire_after = {bad}\n")
        with pytest.raises(ConfigError) as info:
            load_global(tmp_path)
        assert info.value.key == "runs.expire_after"


def test_a_project_file_may_set_neither(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    repo.mkdir()
    settings = load_global(home)
    for text, key in (
        ('[runs]\nexpire_after = "1h"\n', "runs.expire_after"),
        ("[agent.api-fixer]\nbriefing_max_chars = 900\n", "agent.api-fixer.briefing_max_chars"),
    ):
        (repo / ".fleetmem.toml").write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as info:
            apply_project(settings, repo)
        assert info.value.key == key and "global-only" in str(info.value)
