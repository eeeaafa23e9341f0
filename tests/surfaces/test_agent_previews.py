"""Previews of what an agent receives (its briefing, its whole-agent context report) come
from the workspace its runs act in (``[agent.NAME] workspace``), whichever workspace the
operator looks from; a token of another workspace is told the agent is not found there."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fleetmem.errors import NotFound
from fleetmem.service.api_tokens import Tier, mint_token
from fleetmem.service.bootstrap import build
from fleetmem.surfaces.agent_views import briefing_preview
from fleetmem.surfaces.files_views import report_view
from tests.conftest import write_config
from tests.surfaces.test_http import Daemon
from tests.workspace_fill import ALICE, MARINA

BASE = '[model_api]\nembedding_model = ""\n'
#: A briefing is about a repository: outside any there is nothing to brief.
REPO = "github.com/acme/api"


@dataclass
class Bound:
    home: Path
    acme: str
    acme_word: str
    home_word: str


@pytest.fixture
def bound(home: Path) -> Bound:
    write_config(home, BASE)
    app = build(home, {"HOME": str(home.parent)})
    acme_word, home_word = "acme" + secrets.token_hex(4), "home" + secrets.token_hex(4)
    try:
        acme = app.workspaces.create("Acme").id
        view = app.in_workspace(acme)
        made = view.facts.add(f"The {acme_word} ledger runs in UTC.", actor=ALICE).fact
        view.facts.pin(made.id, actor=ALICE)
        long_voice = f"Say {acme_word}. " + "Keep every sentence short and plain. " * 40
        view.files.save(view.files.ref("voice"), long_voice, base_revision=0, actor=MARINA)
        mine = app.facts.add(f"The {home_word} ledger runs in UTC.", actor=ALICE).fact
        app.facts.pin(mine.id, actor=ALICE)
        app.files.save(app.files.ref("voice"), f"Say {home_word}.", base_revision=0, actor=MARINA)
    finally:
        app.close()
    write_config(home, f'{BASE}[agent.acme-bot]\nworkspace = "{acme}"\n[agent.home-bot]\n')
    return Bound(home, acme, acme_word, home_word)


def test_the_operator_previews_each_agent_from_its_own_workspace(bound: Bound) -> None:
    app = build(bound.home, {"HOME": str(bound.home.parent)})
    try:
        acme = briefing_preview(app, "acme-bot", repo=REPO)
        assert acme["workspace"] == bound.acme
        assert bound.acme_word in acme["text"] and bound.home_word not in acme["text"]
        home = briefing_preview(app.in_workspace(bound.acme), "home-bot", repo=REPO)
        assert home["workspace"] == "default"
        assert bound.home_word in home["text"] and bound.acme_word not in home["text"]
        with pytest.raises(NotFound):
            briefing_preview(app, "acme-bot", repo=REPO, operator=False)
    finally:
        app.close()


@pytest.fixture
def daemon(bound: Bound) -> Iterator[Daemon]:
    d = Daemon(bound.home)
    yield d
    d.stop()


def test_over_http_another_workspaces_token_does_not_find_the_agent(
    bound: Bound, daemon: Daemon
) -> None:
    c = daemon.client  # the control token: the operator
    preview = c.get("/api/v1/agents/acme-bot/briefing", params={"repo": REPO})
    assert preview.status_code == 200, preview.text
    assert preview.json()["workspace"] == bound.acme and bound.acme_word in preview.json()["text"]
    report = c.get("/api/v1/agents/acme-bot/context-report")
    assert report.status_code == 200, report.text
    # The report counts the acme workspace's files (the two voices differ in length).
    app = build(bound.home, {"HOME": str(bound.home.parent)})
    try:
        theirs_report = report_view(app.in_workspace(bound.acme).files.report("acme-bot"))
        mine_report = report_view(app.files.report("acme-bot"))
    finally:
        app.close()
    assert theirs_report != mine_report
    got_report = report.json()
    assert got_report["total"] == theirs_report["total"] != mine_report["total"]
    # A token of the default workspace that is not the operator's: not found, not forbidden.
    other = mint_token(bound.home, Tier.CONTROL, "home-ci", 0.0, "default")
    for path in ("/api/v1/agents/acme-bot/briefing", "/api/v1/agents/acme-bot/context-report"):
        got = c.get(path, params={"repo": REPO}, headers={"Authorization": f"Bearer {other}"})
        assert got.status_code == 404, (path, got.text)
        assert bound.acme_word not in got.text
    # A token of the agent's own workspace sees it.
    theirs = mint_token(bound.home, Tier.READ, "acme-read", 0.0, bound.acme)
    got = c.get(
        "/api/v1/agents/acme-bot/briefing",
        params={"repo": REPO},
        headers={"Authorization": f"Bearer {theirs}"},
    )
    assert got.status_code == 200 and bound.acme_word in got.json()["text"]
