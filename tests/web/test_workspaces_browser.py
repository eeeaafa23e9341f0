"""Workspaces in a real browser (issue 21 part 7): the switcher binds the session to another
workspace and every page and API call then shows only that workspace's facts and files;
another workspace's fact is "not here" (404); two sessions stay in their own workspaces; the
Workspaces page creates (with errors naming what is wrong), renames and deletes, deletion
confirmed by typing the name and leaving no row behind."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
from playwright.sync_api import expect

from fleetmem.service.bootstrap import App
from fleetmem.service.file_types import Actor as FileActor
from tests.conftest import home_store
from tests.web.conftest import ME, VECTORS_OFF, Browsing, WebDaemon, needs_chromium, shot

pytestmark = needs_chromium

Start = Callable[..., WebDaemon]
Browse = Callable[[WebDaemon], Browsing]
HOME_FACT = "Home deploys on Mondays."
ACME_FACT = "Acme deploys on Fridays."


def _second_session(browser_factory: Browse, daemon: WebDaemon) -> Any:
    """A page of a second, separately signed-in browser (a fresh login link)."""
    deadline = time.monotonic() + 20
    while len(daemon.links()) < 2 and time.monotonic() < deadline:
        httpx.post(daemon.url + "/login/new-link", follow_redirects=False)
        time.sleep(1)
    other = browser_factory(daemon)
    context = other.browser.new_context(
        viewport={"width": 1280, "height": 860}, base_url=daemon.url
    )
    other.contexts.append(context)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(daemon.links()[-1])
    page.wait_for_url("**/memory")
    return page


def test_switch_create_rename_delete(start_daemon: Start, browse: Browse) -> None:
    ids: dict[str, str] = {}

    def seed(app: App) -> None:
        acme = app.workspaces.create("Acme").id
        ids["acme"] = acme
        ids["home_fact"] = app.facts.add(HOME_FACT, actor=ME).fact.id
        ids["acme_fact"] = app.in_workspace(acme).facts.add(ACME_FACT, actor=ME).fact.id
        voice = app.files.ref("voice")
        app.in_workspace(acme).files.save(
            voice, "Acme voice.", base_revision=0, actor=FileActor("user", "marina")
        )

    daemon = start_daemon(VECTORS_OFF, seed=seed)
    browsing = browse(daemon)
    page = browsing.page()
    page.goto("/memory/facts")
    main = page.locator("main")
    expect(main).to_contain_text(HOME_FACT)
    expect(main).not_to_contain_text(ACME_FACT)
    switcher = page.locator("#workspace-switch")
    expect(switcher).to_have_value("default")
    expect(page.locator("[data-switch-button]")).to_be_hidden()  # choosing switches at once

    # Switch: the session is bound to Acme; pages and the pages' API calls act there.
    switcher.select_option(label="Acme")
    page.wait_for_url("**/memory")
    expect(page.locator("#workspace-switch")).to_have_value(ids["acme"])
    expect(page.locator("main")).to_contain_text(ACME_FACT)
    expect(page.locator("main")).not_to_contain_text(HOME_FACT)
    shot(page, "workspaces-switched")
    api = page.request.get("/api/v1/workspaces").json()
    assert api["current"] == ids["acme"]
    assert page.request.get("/api/v1/facts").json()["facts"][0]["body"] == ACME_FACT
    page.goto("/memory/files/voice")
    expect(page.locator("textarea").first).to_have_value("Acme voice.")
    # Another workspace's fact does not exist here.
    missing = page.goto(f"/memory/facts/{ids['home_fact']}")
    assert missing is not None and missing.status == 404
    expect(page.locator("main")).to_contain_text("not in this workspace")
    assert page.request.get(f"/api/v1/facts/{ids['home_fact']}").status == 404

    # A second session stays in the default workspace meanwhile.
    other = _second_session(browse, daemon)
    other.goto("/memory/facts")
    expect(other.locator("main")).to_contain_text(HOME_FACT)
    expect(other.locator("main")).not_to_contain_text(ACME_FACT)
    expect(other.locator("#workspace-switch")).to_have_value("default")

    # The Workspaces page: bad names are refused, saying what is wrong.
    page.goto("/memory/workspaces")
    form = page.locator("#new-workspace")
    form.locator("#ws-new-name").fill("ACME")
    form.get_by_role("button", name="Create workspace").click()
    expect(page.locator("#ws-new-error")).to_contain_text("already named 'Acme'")
    expect(page.locator("#ws-new-name")).to_have_attribute("aria-invalid", "true")
    page.locator("#ws-new-name").fill("Glo\u200bbex")
    page.locator("#new-workspace").get_by_role("button", name="Create workspace").click()
    expect(page.locator("#ws-new-error")).to_contain_text("invisible or control character")
    page.locator("#ws-new-name").fill("Globex")
    page.locator("#new-workspace").get_by_role("button", name="Create workspace").click()
    page.wait_for_url("**/memory/facts")
    expect(page.locator("#workspace-switch option:checked")).to_have_text("Globex")
    expect(page.locator("main")).to_contain_text("Nothing remembered yet")

    # Rename keeps the id.
    page.goto("/memory/workspaces")
    row = page.locator(f"[data-workspace='{ids['acme']}']")
    row.locator("input[name=name]").fill("Acme Two")
    row.get_by_role("button", name="Rename").click()
    expect(page.locator("#flash")).to_have_text("Workspace renamed.")
    expect(page.locator(f"[data-workspace='{ids['acme']}']")).to_contain_text("Acme Two")

    # Delete: what goes is said first; only the name typed exactly goes ahead.
    page.locator(f"[data-workspace='{ids['acme']}']").get_by_role("link", name="Delete…").click()
    expect(page.locator("#delete-workspace")).to_contain_text(
        "This deletes 1 fact, 6 context files"
    )
    expect(page.locator("#delete-workspace")).to_contain_text("Runs, episodes")
    page.locator("#ws-confirm").fill("acme two")
    page.get_by_role("button", name="Delete workspace").click()
    expect(page.locator("#ws-delete-error")).to_contain_text("exactly")
    shot(page, "workspaces-delete-confirm")
    page.locator("#ws-confirm").fill("Acme Two")
    page.get_by_role("button", name="Delete workspace").click()
    page.wait_for_url("**/memory/workspaces?done=deleted")
    expect(page.locator("#flash")).to_have_text("Workspace deleted, with everything in it.")
    options = page.locator("#workspace-switch option")
    expect(options).to_have_count(2)
    expect(page.locator(f"[data-workspace='{ids['acme']}']")).to_have_count(0)
    with home_store(daemon.home) as store:
        assert set(store.workspace_row_counts(ids["acme"]).values()) == {0}
        assert store.workspace_get(ids["acme"]) is None
    # The default workspace can be renamed but offers no delete.
    default_row = page.locator("[data-workspace='default']")
    expect(default_row.get_by_role("link", name="Delete…")).to_have_count(0)
    other.goto("/memory/facts")
    expect(other.locator("main")).to_contain_text(HOME_FACT)
