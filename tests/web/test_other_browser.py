"""Agents, episodes, runs and Status in a real browser: the whole-agent report, the briefing
preview, what left the daemon, and the doctor's rows."""

from __future__ import annotations

import json
from collections.abc import Callable

from playwright.sync_api import expect

from fleetmem.service.bootstrap import App, build
from tests.conftest import EXAMPLE
from tests.surfaces.cli_helpers import env_for, run_cli
from tests.web.conftest import Browsing, WebDaemon, needs_chromium, shot
from tests.web.seeds import USER
from tests.web.test_files_browser import long_notes

pytestmark = needs_chromium

Start = Callable[..., WebDaemon]
Browse = Callable[[WebDaemon], Browsing]
CONFIG = '[model_api]\nembedding_model = ""\n[agent.research]\n[agent.api-fixer]\n'


def seed(app: App) -> None:
    app.memory.ingest_run(EXAMPLE.read_bytes())
    pinned = app.facts.add("Every deploy waits for a green CI run.").fact
    app.facts.pin(pinned.id)
    app.facts.add("Invoices go out on the first working day of the month.")
    app.files.save(
        app.files.ref("notes", agent="research"), long_notes(), base_revision=0, actor=USER
    )
    app.files.save(
        app.files.ref("identity", agent="research"),
        "You are the research agent: careful, brief, sourced.\n",
        base_revision=0,
        actor=USER,
    )


def test_login_page(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon()
    b = browse(daemon)
    context = b.browser.new_context(base_url=daemon.url, viewport={"width": 1280, "height": 720})
    b.contexts.append(context)
    page = context.new_page()
    page.goto("/memory/facts")
    page.wait_for_url("**/login")
    expect(page.locator("h1")).to_have_text("Sign in to Memory")
    expect(page.locator("main")).to_contain_text("Open the login link printed by fleetmem serve")
    shot(page, "21-login")


def test_agent_report_and_briefing_preview(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon(CONFIG, seed=seed)
    page = browse(daemon).page()
    page.locator("nav.rail summary", has_text="research").click()
    page.locator("nav.rail").get_by_role("link", name="What it receives").first.click()
    page.wait_for_url("**/memory/agents/research")
    report = daemon.client.get("/api/v1/agents/research/context-report").json()
    expect(page.locator(".report-head .total")).to_contain_text(f"{report['total']:,}")
    notes = page.locator('tr[data-segment="notes"]')
    seg = next(s for s in report["segments"] if s["key"] == "notes")
    expect(notes).to_contain_text(f"{seg['used']:,} / 1,500")
    expect(notes).to_contain_text(f"⚠ {seg['skipped_tokens']:,} skipped")
    expect(notes.locator('[role="meter"]')).to_have_attribute(
        "aria-valuetext",
        f"Notes: {seg['used']:,} of 1,500 tokens used, {seg['skipped_tokens']:,} tokens skipped",
    )
    expect(page.locator(".report")).to_contain_text(
        "Measured from the current content — no run needed."
    )
    expect(page.locator('tr[data-segment="facts"]')).to_contain_text("1 pinned + 1 recalled")
    # Per host (issue 18 part 2): the API's figures, to the token, on the page.
    for host in report["hosts"]:
        row = page.locator(f'tr[data-host="{host["host"]}"]')
        expect(row).to_contain_text(f"{host['delivered_tokens']:,} tokens")
        if host["whole"]:
            expect(row).to_contain_text("nothing: all of it is given")
        else:
            expect(row).to_contain_text(f"{host['withheld_tokens']:,} tokens")
    shot(page, "15-agent-context-report")
    notes.get_by_role("link", name="Open").click()
    page.wait_for_url("**/memory/agents/research/files/notes")

    page.goto("/memory/agents/newcomer")
    expect(page.locator(".notice.info")).to_have_text(
        "Nothing written yet — this agent runs on defaults."
    )

    page.goto("/memory/agents/api-fixer/briefing")
    expect(page.locator(".caption")).to_contain_text("github.com/acme/api")
    preview = daemon.client.get("/api/v1/status").json()["provider"]
    expect(page.locator(".card")).to_contain_text(f"{preview['name']}: {preview['state']}")
    expect(page.locator(".card")).to_contain_text("of 2,000 characters")
    expect(page.locator(".card")).to_contain_text("of 4,096 bytes")
    app = build(daemon.home, env_for(daemon.home))  # the same service, over the same store
    try:
        composed = app.briefings.preview("api-fixer")
    finally:
        app.close()
    assert composed.shown.get("recent_runs") == 1
    for name in ("collisions", "recent_runs", "facts", "episodes"):
        cells = page.locator(f'tr[data-section="{name}"] td')
        expect(cells.nth(1)).to_have_text(str(composed.shown.get(name, 0)))
        expect(cells.nth(2)).to_have_text(str(composed.omitted.get(name, 0)))
    expect(page.locator(".card")).to_contain_text(f"{composed.chars:,} of 2,000 characters")
    expect(page.locator("pre.doc")).to_contain_text('<fleetmem-memory kind="briefing"')
    shot(page, "16-briefing-preview")


def test_episodes_what_left_the_daemon_and_runs(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon(CONFIG, seed=seed)
    page = browse(daemon).page()
    page.locator("nav.rail").get_by_role("link", name="Episodes").click()
    listed = daemon.client.get("/api/v1/episodes", params={"since": "3650d"}).json()["episodes"]
    episode_id = listed[0]["episode_id"]
    expect(page.locator("table")).to_contain_text(episode_id)
    shot(page, "17-episodes")
    page.get_by_role("link", name=episode_id).click()
    detail = daemon.client.get(f"/api/v1/episodes/{episode_id}").json()
    left = page.locator(
        "section.card", has=page.get_by_role("heading", name="What left the daemon")
    )
    assert left.locator("pre.doc").first.evaluate("e => e.textContent") == detail["text"]
    expect(left).to_contain_text("builtin")
    shot(page, "18-episode-what-left")
    page.on("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Forget this episode").click()
    expect(page.locator(".notice.ok")).to_contain_text("Forgotten")
    gone = daemon.client.get(f"/api/v1/episodes/{episode_id}")
    assert gone.status_code == 404 and "forgotten" in gone.json()["error"]["message"]

    page.locator("nav.rail").get_by_role("link", name="Runs").click()
    run_id = detail["run_id"]
    page.get_by_role("link", name=run_id).click()
    expect(page.locator("main h2").first).to_have_text(f"Run {run_id}")
    expect(page.locator("main")).to_contain_text("api-fixer")
    shot(page, "19-run")


def test_status_page_shows_the_doctors_rows(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon(CONFIG, seed=seed)
    page = browse(daemon).page()
    page.locator("nav.rail").get_by_role("link", name="Status").click()
    doctor = json.loads(run_cli(daemon.home, "doctor", "--json", check=False).stdout)["checks"]
    shown = page.locator("table.doctor tbody tr")
    expect(shown).to_have_count(len(doctor))
    for i, check in enumerate(doctor):
        row = shown.nth(i)
        expect(row.locator("th")).to_have_text(check["name"])
        expect(row.locator(".badge")).to_contain_text(check["status"])
    shot(page, "20-status")


def test_on_a_phone_the_page_starts_on_the_first_screen(
    start_daemon: Start, browse: Browse
) -> None:
    """At a phone's width the rail is one strip that scrolls sideways: the page's own heading
    is on the first screen, on the facts list and on an agent's page alike."""
    daemon = start_daemon(seed=lambda app: app.files.save(
        app.files.ref("notes", agent="research"), "Short notes.\n", base_revision=0, actor=USER
    ))  # fmt: skip
    page = browse(daemon).page(width=390, height=844)
    for url in ("/memory/facts", "/memory/agents/research"):
        page.goto(url)
        rail = page.locator("nav.rail").bounding_box()
        heading = page.locator("main h1, main h2").first.bounding_box()
        assert rail is not None and heading is not None
        assert rail["height"] <= 120, (url, rail)
        assert heading["y"] < 844 / 2, (url, heading)
        # Every rail link can still be reached: the strip scrolls to it.
        last = page.locator("nav.rail a").last
        last.scroll_into_view_if_needed()
        expect(last).to_be_in_viewport()
    shot(page, "30-phone-width")


#: Runs in two repositories, and a question about one of them in other words.
SEARCHED = (
    (
        "github.com/acme/api",
        "Made the CSV export stream rows instead of building the file in memory",
    ),
    ("github.com/acme/web", "Fixed an off-by-one in pagination that skipped the last invoice"),
    ("github.com/acme/web", "Renamed the lint workflow and bumped its cache key"),
)


def seed_runs(app: App) -> None:
    from tests.conftest import ingest_text

    for n, (repo, text) in enumerate(SEARCHED):
        ingest_text(app.memory, f"s{n}", f"2026-11-2{n}T10:00:00Z", text, repo=repo, branch=f"b{n}")


def test_episodes_searched_by_meaning_across_every_repository(
    start_daemon: Start, browse: Browse
) -> None:
    daemon = start_daemon('[model_api]\nembedding_model = "local:minilm"\n', seed=seed_runs)
    page = browse(daemon).page()
    page.locator("nav.rail").get_by_role("link", name="Episodes").click()
    search = page.get_by_role("search", name="Search episodes by meaning")
    search.get_by_label("Search").fill("final bill missing from listing pages")
    search.get_by_role("button", name="Search").click()
    expect(page.locator("main h3")).to_contain_text("in every repository")
    first = page.locator("#recall-results tbody tr").first
    expect(first).to_contain_text("github.com/acme/web")
    expect(first).to_contain_text("pagination")
    shot(page, "17b-episodes-search")
    # The same search held to the other repository does not reach across.
    search.get_by_label("Repository").fill("github.com/acme/api")
    search.get_by_role("button", name="Search").click()
    expect(page.locator("main h3")).to_contain_text("in github.com/acme/api")
    expect(page.locator("main")).not_to_contain_text("pagination")
    # A question about nothing the store holds answers nothing, not the least unrelated run.
    search.get_by_label("Repository").fill("")
    search.get_by_label("Search").fill("chocolate cake recipe")
    search.get_by_role("button", name="Search").click()
    expect(page.locator("#recall-empty")).to_contain_text("Nothing relevant")
    # A bad repository key is named in the error, not a crash.
    search.get_by_label("Repository").fill("not a repo!")
    search.get_by_label("Search").fill("pagination")
    search.get_by_role("button", name="Search").click()
    expect(page.locator("main")).to_contain_text("repo")
