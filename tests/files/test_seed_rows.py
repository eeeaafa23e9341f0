"""The whole-agent report's Skills and Scope prompts rows (seed 003 FR-47, §6.7): real
segments of what a run is given, so the report and a run agree to the token (FR-50)."""

from __future__ import annotations

import re

import pytest

from fleetmem.core.context import fence_open
from fleetmem.core.contextfiles import count_skills
from fleetmem.errors import ConfigError, NotPermitted
from fleetmem.service.file_types import Actor
from fleetmem.service.files import ContextFileService
from tests.files.conftest import MARINA, ServiceFactory
from tests.files.test_context import AGENT, REPO, TOK, bodies_in, fill

SKILLS = (
    "## Cut a release\nTag from main, then run the release job.\n\n"
    "## Triage a failing test\nReproduce locally first; never skip a test to go green.\n\n"
    "## Rotate a credential\nOpen a ticket with the security team first.\n"
)
PROMPT = "Work here follows the payments style guide; every change needs a ledger test.\n"


def test_skills_and_the_scope_prompt_reach_a_run_as_instructions(
    files: ContextFileService,
) -> None:
    fill(files, "skills", SKILLS, agent=AGENT)
    fill(files, "scope_prompt", PROMPT, repo=REPO)
    context = files.assemble(AGENT, repo=REPO, run_id="run-s1")
    text = context.text
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings[:2] == ["Skills", "Cut a release"]  # the file's own headings follow
    assert "Scope prompts" in headings
    # Written by people only: instructions, not fenced reference data.
    assert fence_open(context.assembly.nonce) not in text
    bodies_in(context.assembly)
    loads = {(load.segment, load.ref, load.used) for load in files.run_loads("run-s1")}
    assert ("skills", f"agent/{AGENT}/skills", TOK.count(SKILLS)) in loads
    assert ("scope_prompts", f"project/{REPO}/scope_prompt", TOK.count(PROMPT)) in loads


def test_the_report_rows_agree_with_the_run_and_the_file_meters(
    files: ContextFileService,
) -> None:
    fill(files, "skills", SKILLS, agent=AGENT)
    fill(files, "scope_prompt", PROMPT, repo=REPO)
    report = files.report(AGENT, repo=REPO).context.assembly
    run = files.assemble(AGENT, repo=REPO, run_id="run-s2").assembly
    for key, ref in (
        ("skills", files.ref("skills", agent=AGENT)),
        ("scope_prompts", files.ref("scope_prompt", repo=REPO)),
    ):
        row, loaded = report.segment(key), run.segment(key)
        meter = files.get(ref).meter
        assert (row.budget, row.used, row.tokens) == (loaded.budget, loaded.used, loaded.tokens)
        assert (meter.budget, meter.tokens) == (row.budget, row.tokens)
    assert report.segment("skills").budget == 4000
    assert report.segment("scope_prompts").budget == 600
    assert count_skills(SKILLS) == 3


def test_without_a_repository_the_scope_prompts_row_is_empty(files: ContextFileService) -> None:
    fill(files, "scope_prompt", PROMPT, repo=REPO)
    report = files.report(AGENT).context.assembly
    row = report.segment("scope_prompts")
    assert (row.budget, row.used, row.present) == (600, 0, False)
    assert "Scope prompts" not in report.text


def test_an_agents_own_skills_budget(make_files: ServiceFactory) -> None:
    files = make_files(f"[agent.{AGENT}]\nskills_budget = 200\n")
    fill(files, "skills", SKILLS * 6, agent=AGENT)
    meter = files.get(files.ref("skills", agent=AGENT)).meter
    segment = files.assemble(AGENT, run_id="run-s3").assembly.segment("skills")
    assert meter.budget == segment.budget == 200
    assert meter.report is not None and meter.report.used == segment.used == 200
    assert segment.skipped_tokens == TOK.count(SKILLS * 6) - 200
    other = files.report("outreach").context.assembly.segment("skills")
    assert other.budget == 4000  # only that agent's


@pytest.mark.parametrize("value", ["50", "9000", '"big"'])
def test_a_skills_budget_out_of_range_is_refused(make_files: ServiceFactory, value: str) -> None:
    with pytest.raises(ConfigError, match="skills_budget"):
        make_files(f"[agent.{AGENT}]\nskills_budget = {value}\n")


def test_agents_write_neither_skills_nor_the_scope_prompt(files: ContextFileService) -> None:
    agent = Actor("agent", AGENT, "run-9")
    for ref in (files.ref("skills", agent=AGENT), files.ref("scope_prompt", repo=REPO)):
        with pytest.raises(NotPermitted):
            files.save(ref, "mine now", base_revision=0, actor=agent)
    fill(files, "skills", SKILLS, agent=AGENT)
    assert files.get(files.ref("skills", agent=AGENT)).updated_by == f"user:{MARINA.name}"


def test_count_skills() -> None:
    assert count_skills("") == 0
    assert count_skills("Always run the linter.") == 1
    assert count_skills("## One\nx\n### Not a skill\n## Two\n") == 2
