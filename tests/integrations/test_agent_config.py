"""The ``[agent.NAME]`` keys of ``fleetmem run``: where they may be set and what they allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetmem.config import apply_project, load_global
from fleetmem.core import prompt_template
from fleetmem.errors import ConfigError


def _load(home: Path, text: str):  # type: ignore[no-untyped-def]
    (home / "fleetmem.toml").write_text(text, encoding="utf-8")
    return load_global(home)


def test_the_run_keys_parse_with_their_defaults(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        '[agent.triage]\nadapter = "claude-code"\nprompt = "Triage.\\nCarefully."\n'
        'args = ["--permission-mode", "acceptEdits"]\nenv = { A = "1" }\ntimeout = "30m"\n'
        'verify_patterns = [{match = "^make check", class = "test_failure"}]\n',
    )
    agent = settings.agent("triage")
    assert agent.memory_briefing is False and agent.prompt_source == "prompt"
    assert agent.timeout_s == 1800.0 and agent.kill_grace_s == 10.0 and agent.respawns == 0
    assert agent.verify_patterns[0].error_class == "test_failure"
    assert settings.agent("undeclared").memory_briefing is False


@pytest.mark.parametrize(
    "key", ["memory_briefing = true", "memory_briefing = false", 'command = "/bin/sh"',
            'prompt = "x"', 'env = { A = "1" }', 'workdir = "/tmp"'],
)  # fmt: skip
def test_a_project_file_cannot_set_how_an_agent_runs(tmp_path: Path, key: str) -> None:
    settings = _load(tmp_path, "")
    project = tmp_path / "repo"
    project.mkdir()
    (project / ".fleetmem.toml").write_text(f"[agent.triage]\n{key}\n")
    name = key.split(" ")[0]
    with pytest.raises(ConfigError, match=f"agent.triage.{name}.*global-only"):
        apply_project(settings, project)


def test_event_fields_need_untrusted_inline_which_memory_briefing_does_not_open(
    tmp_path: Path,
) -> None:
    template = 'prompt_template = "Triage {{untrusted event.title}}"\n'
    with pytest.raises(ConfigError, match="untrusted_inline") as caught:
        _load(tmp_path, f"[agent.triage]\nmemory_briefing = true\n{template}")
    assert "agent.triage.prompt_template" in str(caught.value)
    ok = _load(tmp_path, f"[agent.triage]\nuntrusted_inline = true\n{template}")
    assert ok.agent("triage").prompt_template is not None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('[agent.a]\nprompt = "x"\nprompt_file = "y"\n', "agent.a.prompt_file.*only one"),
        ('[agent.a]\nadapter = "command"\n', "agent.a.adapter.*command"),
        ('[agent.a]\nadapter = "aider"\n', "agent.a.adapter"),
        ('[agent.a]\nprompt_template = "{{nope}}"\n', "unknown placeholder"),
        ('[agent.a]\nprompt_template = "{{event.title}}"\n', "untrusted event.title"),
        ('[agent.a]\nverify_patterns = [{match = "(", class = "x"}]\n', "regular expression"),
        ('[agent.a]\nverify_patterns = [{match = "x", class = "a b"}]\n', "class must"),
        ("[agent.a]\nrespawns = 9\n", "between 0 and 5"),
        ('[agent.a]\nprompt = "a\\u0000b"\n', "control characters"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        _load(tmp_path, text)


def test_templates_render_run_variables_and_fence_event_fields() -> None:
    fenced: list[tuple[str, str]] = []

    def fence(name: str, value: str) -> str:
        fenced.append((name, value))
        return f"<<{name}>>"

    text = prompt_template.render(
        "Fix {{ repo }} on {{branch}} ({{untrusted event.issue.title}}){{workdir}}",
        {"repo": "github.com/acme/api", "branch": "main\nIGNORE", "workdir": None},
        event={"issue": {"title": "Ledger off by one"}},
        fence=fence,
    )
    assert text == "Fix github.com/acme/api on mainIGNORE (<<issue.title>>)"
    assert fenced == [("issue.title", "Ledger off by one")]
    assert prompt_template.render("{{untrusted event.x}}", {}, fence=fence) == ""
    with pytest.raises(prompt_template.TemplateError, match="never closed"):
        prompt_template.parse("a {{repo")
