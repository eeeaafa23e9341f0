"""The Memory page, finished (issue 21 part 8), in a real browser: the activity feed across
facts, votes and files (seed 003 FR-18, S3, S8), a fact's scope ("Limit to one agent…"),
Tidy up as a review of proposed merges (S13) and the whole-agent report's Skills and Scope
prompts rows (FR-47, §6.7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from fleetmem.service.bootstrap import App
from tests.web.conftest import ME, VECTORS_OFF, Browsing, WebDaemon, needs_chromium, shot
from tests.web.seeds import USER, seed_facts

pytestmark = needs_chromium

Start = Callable[..., WebDaemon]
Browse = Callable[[WebDaemon], Browsing]
RESEARCH = VECTORS_OFF + "[agent.research]\nedit_agent_files = true\n[agent.outreach]\n"
ESCALATE = "Escalate anything over 5,000 to a human."


def feed(page: Any) -> Any:
    return page.locator("ol.activity-feed > li.entry")


def test_the_activity_feed_across_facts_votes_and_files(
    start_daemon: Start, browse: Browse
) -> None:
    ids: dict[str, str] = {}

    def seed(app: App) -> None:
        older = [f"Standing rule number {i} applies." for i in range(52)]
        seed_facts(app, [*older, ESCALATE], ME)
        ids["escalate"] = app.facts.list(limit=1).items[0].id
        proposal = app.facts.propose("Staging is rebuilt nightly.", agent="research", run_id="r-7")
        assert proposal.fact is not None
        ids["proposal"] = proposal.fact.id
        app.facts.vote(
            run_id="r-8", agent="outreach", repo=None, fact_id=ids["escalate"], stance="support"
        )
        notes = app.files.ref("notes", agent="research")
        app.files.save(notes, "Known: the CI is slow.\n", base_revision=0, actor=USER)
        # S8: the agent writes a line to its own Notes during a run.
        app.files.update_notes(agent="research", text="The API pins Python 3.11.", run_id="r-7")
        app.facts.in_workspace("acme").add("Acme's secret plan.", actor=ME)

    daemon = start_daemon(RESEARCH, seed=seed)
    page = browse(daemon).page()

    # S3: correct a fact in place; the change is in the feed at once.
    page.goto(f"/memory/facts/{ids['escalate']}?edit=1")
    page.locator(f"#edit-{ids['escalate']}").fill("Escalate anything over 2,000 to a human.")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".fact-body").first).to_have_text(
        "Escalate anything over 2,000 to a human."
    )
    page.get_by_role("navigation", name="Memory sections").get_by_role(
        "link", name="Activity"
    ).click()
    expect(page).to_have_url(f"{daemon.url}/memory/activity")
    entries = feed(page)
    expect(entries).to_have_count(50)
    expect(entries.first.locator(".entry-text")).to_have_text(
        "You edited “Escalate anything over 2,000 to a human.”"
    )
    # S8: the agent's edit, marked as one, linked to the file's history.
    agent_edit = entries.filter(has_text="wrote to Notes — research")
    expect(agent_edit).to_have_count(1)
    expect(agent_edit.locator(".entry-text")).to_have_text(
        "research wrote to Notes — research (revision 2)"
    )
    expect(agent_edit.locator(".badge.agent-edit")).to_have_text("Agent edit")
    expect(agent_edit.get_by_role("link", name="run r-7")).to_be_visible()
    expect(
        entries.filter(has_text="outreach voted for “Escalate anything over 2,000")
    ).to_have_count(1)
    expect(
        entries.filter(has_text="research proposed “Staging is rebuilt nightly.”")
    ).to_have_count(1)
    assert "Acme" not in page.content()  # another workspace's entries never show
    shot(page, "30-activity-feed")

    # Paged: the older entries follow on the next page, none repeated.
    first_page = entries.all_inner_texts()
    page.get_by_role("link", name="Older").click()
    rest = feed(page).all_inner_texts()
    # 53 taught, a proposal, a vote, two Notes revisions and the edit: 58 entries.
    assert len(rest) == 58 - 50 and not set(rest) & set(first_page)
    expect(feed(page).last.locator(".entry-text")).to_have_text(
        "You taught “Standing rule number 0 applies.”"
    )
    page.get_by_role("link", name="Newest").click()

    # The owner reverts the agent's edit in one click from where the entry leads.
    feed(page).filter(has_text="wrote to Notes").get_by_role(
        "link", name="Notes — research"
    ).click()
    expect(page).to_have_url(f"{daemon.url}/memory/agents/research/files/notes/history")
    page.locator("tr", has_text="marina").get_by_role("button", name="Restore").click()
    expect(page.locator(".notice.ok")).to_be_visible()
    page.goto("/memory/activity")
    expect(feed(page).first.locator(".entry-text")).to_have_text(
        "You restored an earlier revision of Notes — research (restored revision 1)"
    )
    # The fact entry leads to the fact.
    feed(page).filter(has_text="You edited").get_by_role("link").first.click()
    expect(page).to_have_url(f"{daemon.url}/memory/facts/{ids['escalate']}")

    # The same feed in the API.
    api = daemon.client.get("/api/v1/activity", params={"limit": 3}).json()
    assert [e["text"] for e in api["entries"]][:1] == [
        f"{ME.name} restored an earlier revision of Notes — research (restored revision 1)"
    ]
    assert api["entries"][0]["link"] == "/memory/agents/research/files/notes/history"


def test_limit_a_fact_to_one_agent_and_back(start_daemon: Start, browse: Browse) -> None:
    ids: list[str] = []

    def seed(app: App) -> None:
        ids.extend(seed_facts(app, ["Deploys happen on Tuesdays."], ME))

    daemon = start_daemon(RESEARCH, seed=seed)
    page = browse(daemon).page()
    row = page.locator(f"#fact-{ids[0]}")
    row.locator("details.menu summary").click()
    row.get_by_role("link", name="Limit to one agent…").click()
    expect(page).to_have_url(f"{daemon.url}/memory/facts/{ids[0]}#scope")
    scope = page.locator("#scope")
    expect(scope.locator("#scope-select")).to_have_value("workspace")
    scope.locator("#scope-select").select_option(label="only research")
    scope.get_by_role("button", name="Change who gets it").click()
    expect(page.locator("#flash")).to_have_text(
        "Scope changed. Runs started from now on see it there."
    )
    expect(page.locator(".fact-meta").first).to_contain_text("only research")
    assert daemon.client.get(f"/api/v1/facts/{ids[0]}").json()["scope"] == "agent:research"
    # An agent not known yet, by name; a bad name is refused in words, nothing changes.
    page.locator("#scope-agent").fill("release-bot")
    page.get_by_role("button", name="Change who gets it").click()
    expect(page.locator(".fact-meta").first).to_contain_text("only release-bot")
    shot(page, "31-fact-scope")
    page.locator("#scope-select").select_option(label="every agent")
    page.get_by_role("button", name="Change who gets it").click()
    expect(page.locator(".fact-meta").first).not_to_contain_text("only")
    assert daemon.client.get(f"/api/v1/facts/{ids[0]}").json()["scope"] == "workspace"
    history = daemon.client.get(f"/api/v1/facts/{ids[0]}/history").json()["entries"]
    assert [e["action"] for e in history] == ["create", "scope", "scope", "scope"]
    page.goto("/memory/activity")
    expect(feed(page).first.locator(".entry-text")).to_have_text(
        "You changed who gets “Deploys happen on Tuesdays.” (now for every agent)"
    )


def test_s13_tidy_up_reviews_proposed_merges_of_active_facts(
    start_daemon: Start, browse: Browse
) -> None:
    from fleetmem.core.facts import MAX_KEPT
    from tests.web.seeds import clone_facts

    ids: list[str] = []
    pairs = [
        "Database migrations run from the deploy job only.",
        "Database migrations run only from the deploy job.",
        "Customer names never appear in log lines.",
        "Customer names must never appear in log lines.",
    ]

    def seed(app: App) -> None:
        clone_facts(app, ME, MAX_KEPT - len(pairs))
        ids.extend(seed_facts(app, pairs, ME, days=1.0))

    daemon = start_daemon(VECTORS_OFF, seed=seed)
    page = browse(daemon).page()
    counts = daemon.client.get("/api/v1/facts/counts").json()
    assert (counts["active"], counts["proposed"]) == (MAX_KEPT, 0)  # full, nothing to review
    page.locator(".over-cap").get_by_role("link", name="Tidy up").click()
    expect(page).to_have_url(f"{daemon.url}/memory/facts/tidy-up")
    proposed = page.locator("li.tidy-pair")
    expect(proposed).to_have_count(2)
    expect(page.locator("[data-tidy-count]")).to_have_text("2 proposed merges")
    expect(page.locator(".notice.info")).to_contain_text("Compared by their words")
    first = proposed.filter(has_text="Database migrations")
    expect(first.locator(".tidy-fact").first).to_contain_text(pairs[0])  # the older is kept
    expect(first.locator(".tidy-fact").last).to_contain_text(pairs[1])
    shot(page, "32-tidy-up")

    first.get_by_role("button", name="Merge", exact=True).click()
    expect(page.locator("#flash")).to_have_text(
        "Merged. The fact you kept carries where both came from."
    )
    expect(proposed).to_have_count(1)
    merged = daemon.client.get(f"/api/v1/facts/{ids[0]}").json()
    assert [p["merged_from"] for p in merged["provenance"]] == [None, ids[1]]

    proposed.first.get_by_role("button", name="Keep both").click()
    expect(page.locator("#flash")).to_contain_text("Kept both.")
    expect(page.locator(".empty-title")).to_have_text("Nothing to tidy up")
    page.reload()
    expect(proposed).to_have_count(0)  # remembered
    assert daemon.client.get("/api/v1/facts/tidy-up").json()["total"] == 0

    # The merge made room; both decisions are in the feed.
    added = daemon.client.post("/api/v1/facts", json={"body": "One more than before."})
    assert added.status_code == 201, added.text
    page.goto("/memory/activity")
    texts = feed(page).all_inner_texts()
    assert any("You kept “Customer names" in t and "not merged" in t for t in texts), texts
    assert any(t.startswith("You merged “Database migrations run only") for t in texts), texts


def test_the_report_has_skills_and_scope_prompts_rows(start_daemon: Start, browse: Browse) -> None:
    repo = "github.com/acme/api"
    skills = "## Cut a release\nTag from main.\n\n## Triage a failure\nReproduce it first.\n"

    def seed(app: App) -> None:
        ref = app.files.ref("skills", agent="research")
        app.files.save(ref, skills, base_revision=0, actor=USER)

    daemon = start_daemon(RESEARCH, seed=seed)
    page = browse(daemon).page()
    page.goto("/memory/agents/research")
    api = daemon.client.get("/api/v1/agents/research/context-report").json()
    used = {s["key"]: s for s in api["segments"]}
    row = page.locator('tr[data-segment="skills"]')
    expect(row.locator("th")).to_have_text("Skills")
    expect(row).to_contain_text(f"{used['skills']['used']:,} / 4,000")
    expect(row).to_contain_text("2 skills bound")
    prompts = page.locator('tr[data-segment="scope_prompts"]')
    expect(prompts).to_contain_text("0 / 600")
    expect(prompts).to_contain_text("none set")

    # A repository's scope prompt: written on its own page, counted in the row to the token.
    page.goto(f"/memory/scope-prompt?repo={repo}")
    page.locator("#file-text").fill("Every change here needs a ledger test.\n")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".notice.ok")).to_contain_text("Saved.")
    page.goto(f"/memory/agents/research?repo={repo}")
    api = daemon.client.get("/api/v1/agents/research/context-report", params={"repo": repo}).json()
    seg = next(s for s in api["segments"] if s["key"] == "scope_prompts")
    assert seg["used"] > 0
    prompts = page.locator('tr[data-segment="scope_prompts"]')
    expect(prompts).to_contain_text(f"{seg['used']:,} / 600")
    expect(prompts).not_to_contain_text("none set")
    shot(page, "33-report-seed-rows")
    prompts.get_by_role("link", name="Open").click()
    expect(page).to_have_url(f"{daemon.url}/memory/scope-prompt?repo={repo}")
    # What a run gets holds the same rows.
    context = daemon.client.get("/api/v1/agents/research/context", params={"repo": repo}).json()
    assert "## Skills\n" in context["text"] and "## Scope prompts\n" in context["text"]
