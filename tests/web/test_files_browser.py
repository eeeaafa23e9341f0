"""Context files in a real browser: the load meter, Preview, "Ask an agent to update this",
the concurrent-edit banner, the every-run limit and the editor's keys (seed 003 S5-S7, S11,
S12, S20, §6.5-§6.10)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from fleetmem.service.bootstrap import App
from fleetmem.surfaces.web.render import percent
from fleetmem.tokenize import get_tokenizer
from tests.web.conftest import Browsing, WebDaemon, needs_chromium, shot
from tests.web.seeds import USER

pytestmark = needs_chromium

Start = Callable[..., WebDaemon]
Browse = Callable[[WebDaemon], Browsing]
VOICE = (
    "Short sentences. No exclamation marks.\n"
    'Never say "reach out" — say "email" or "call".\n'
    "Sign off with the person's first name only.\n"
)


def long_notes(tokens: int = 4100) -> str:
    """Notes of about ``tokens`` tokens: a head worth keeping, a long middle, a tail."""
    codec = get_tokenizer()
    lines = [
        "Always check the staging branch before opening a pull request.",
        "The release train leaves on Tuesdays at 14:00 UTC.",
    ]
    i = 0
    while codec.count("\n".join(lines)) < tokens - 40:
        lines.append(
            f"Observation {i}: the nightly import of ledger rows took {i % 17 + 3} minutes."
        )
        i += 1
    lines += [
        "Rotate the API credentials on the first of each quarter.",
        "Escalate anything touching billing to a human.",
    ]
    return "\n".join(lines) + "\n"


def file_json(daemon: WebDaemon, name: str, **params: str) -> dict[str, Any]:
    data: dict[str, Any] = daemon.client.get(f"/api/v1/files/{name}", params=params).json()
    return data


def test_s5_write_a_shared_context_file(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon()
    page = browse(daemon).page()
    page.locator("nav.rail").get_by_role("link", name="Voice").click()
    expect(page.locator(".editor-head h2")).to_have_text("Voice")
    expect(page.locator(".editor-head .badge")).to_have_text("⟳ Loaded every run")
    expect(page.locator(".rule")).to_have_text(
        "Lead with what matters most — the top of a file is the part that always survives."
    )
    page.locator("#file-text").fill(VOICE)
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".notice.ok")).to_contain_text("Saved. Takes effect on the next run.")
    meter = file_json(daemon, "voice")["meter"]
    figures = page.locator(".meter-figures")
    expect(figures).to_contain_text(
        f"{meter['used']:,} / 1,500 tokens · {percent(meter['percent'])} · all of it"
    )
    bar = page.locator('.meter-panel [role="meter"]')
    expect(bar).to_have_attribute("aria-valuenow", str(meter["used"]))
    expect(bar).to_have_attribute("aria-valuetext", meter["text"])
    expect(page.locator("#file-text")).to_have_value(VOICE)  # line breaks survive the form
    assert file_json(daemon, "voice")["body"] == VOICE
    shot(page, "09-file-editor-under-budget")


def test_s6_over_budget_meter_preview_and_s7_ask_an_agent(
    start_daemon: Start, browse: Browse
) -> None:
    notes = long_notes()

    def seed(app: App) -> None:
        app.files.save(app.files.ref("notes", agent="research"), notes, base_revision=0, actor=USER)

    daemon = start_daemon(seed=seed)
    page = browse(daemon).page()
    page.goto("/memory/agents/research/files/notes")
    meter = file_json(daemon, "notes", agent="research")["meter"]
    assert meter["state"] == "over" and meter["budget"] == 1500
    figures = page.locator(".meter-figures")
    expect(figures).to_contain_text(
        f"{meter['used']:,} / 1,500 tokens · {percent(meter['percent'])}"
        f" · {meter['skipped_tokens']:,} tokens skipped"
    )
    expect(figures).to_contain_text("(over budget)")
    assert meter["tokens"] > 1500 and meter["percent"] > 100  # FR-40
    # Per host at the start: the whole-agent report's figures for this file (issue 18 part 2).
    report = daemon.client.get("/api/v1/agents/research/context-report").json()
    for host in report["hosts"]:
        withheld = {p["key"]: p for p in host["withheld"]}.get("notes")
        row = page.locator(f'.meter-panel li[data-host="{host["host"]}"]')
        expect(row).to_contain_text(
            "all of it that fits its budget"
            if withheld is None
            else f"{withheld['tokens']:,} tokens to pull"
        )
    bar = page.locator('.meter-panel [role="meter"]')
    expect(bar).to_have_attribute(
        "aria-valuetext",
        f"Notes: {meter['used']:,} of 1,500 tokens used, "
        f"{meter['skipped_tokens']:,} tokens skipped",
    )
    expect(page.locator(".over-note")).to_contain_text(
        f"{meter['skipped_tokens']:,} tokens are skipped — the middle of this file never reaches"
        f" the agent. See it in Preview, or trim about {meter['skipped']['chars']:,} characters."
    )
    shot(page, "10-file-over-budget")

    # Preview marks the skipped region in place: hatched and struck through, not colour alone.
    page.get_by_role("link", name="Show what is skipped").click()
    block = page.locator("#preview-pane .skipped-block")
    expect(block).to_be_focused()
    expect(block.locator(".skipped-label")).to_contain_text("Skipped — the agent never sees this")
    region = meter["skipped"]
    expect(block).to_contain_text(f"lines {region['line_start']}–{region['line_end']}")
    assert "repeating-linear-gradient" in block.evaluate("e => getComputedStyle(e).backgroundImage")
    struck = block.locator("del.skipped-text")
    assert "line-through" in struck.evaluate("e => getComputedStyle(e).textDecorationLine")
    assert struck.evaluate("e => e.textContent") == notes[region["char_start"] : region["char_end"]]
    shot(page, "11-preview-skipped-region")

    # S7: the chat panel opens with the file attached and the message started.
    page.get_by_role("link", name="Ask an agent to update this").click()
    panel = page.locator("#ask-panel")
    expect(panel).to_be_visible()
    message = panel.locator("[data-ask-message]")
    expect(message).to_have_value("@research update your Notes file: ")
    expect(message).to_be_focused()
    assert message.evaluate("e => e.selectionStart === e.value.length")
    chip = panel.locator("[data-chip]")
    expect(chip).to_have_text("Notes — research")
    chip.click()
    expect(chip).to_have_attribute("aria-expanded", "true")
    expect(panel.locator("#chip-body")).to_contain_text(
        "What rides along with your message, exactly as sent:"
    )
    sent = daemon.client.get("/api/v1/files/notes/ask", params={"agent": "research"}).json()
    shown = panel.locator("[data-sent]").evaluate("e => e.textContent")
    assert shown == sent["attachment"]["text"]  # exactly what is sent, never cut silently
    expect(panel.locator(".skipped-block.in-chip .marker").first).to_contain_text(
        "Skipped — the agent never sees this"
    )
    panel.locator(".skipped-block.in-chip").evaluate("e => e.scrollIntoView({block: 'center'})")
    shot(page, "12-ask-an-agent-chip")
    panel.get_by_role("button", name="Copy message and file").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("@research update your Notes file: \n\nNotes — research:\n")
    assert copied.endswith(sent["attachment"]["text"])


def test_workspace_ask_has_an_optional_agent_picker(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon('[model_api]\nembedding_model = ""\n[agent.research]\n')
    page = browse(daemon).page()
    page.goto("/memory/files/glossary")
    page.keyboard.press("Control+Shift+A")
    message = page.locator("[data-ask-message]")
    expect(message).to_have_value("Update the Glossary context file: ")
    page.locator("#ask-to").select_option("research")
    expect(message).to_have_value("@research update the Glossary context file: ")


def test_s11_two_people_edit_the_same_file(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon()
    b = browse(daemon)
    first, second = b.page(), b.page()
    for page in (first, second):
        page.goto("/memory/files/glossary")
    first.locator("#file-text").fill("API: application programming interface.\n")
    first.keyboard.press("Control+S")
    expect(first.locator(".notice.ok")).to_contain_text("Saved.")
    mine = "SLA: service level agreement.\nSLO: objective.\n"
    second.locator("#file-text").fill(mine)
    second.get_by_role("button", name="Save", exact=True).click()
    banner = second.locator("#conflict")
    expect(banner).to_contain_text("This file changed while you were editing.")
    expect(banner).to_contain_text("Reload to see the current version — your text is kept below.")
    expect(second.locator("#file-text")).to_have_value(mine)  # nothing typed is lost
    assert file_json(daemon, "glossary")["body"] == "API: application programming interface.\n"
    banner.get_by_role("link", name="Compare").click()
    compare = second.locator("#compare")
    expect(compare).to_be_visible()
    expect(compare).to_contain_text("API: application programming interface.")
    expect(compare).to_contain_text("SLA: service level agreement.")
    shot(second, "13-concurrent-edit-compare", full_page=True)
    banner.get_by_role("button", name="Keep").click()
    assert second.evaluate("navigator.clipboard.readText()") == mine
    expect(second.locator("#file-text")).to_have_value(mine)
    # Saving again without reloading is refused again: nothing is silently overwritten.
    second.get_by_role("button", name="Save", exact=True).click()
    expect(second.locator("#conflict")).to_be_visible()
    second.locator("#conflict").get_by_role("button", name="Reload").click()
    expect(second.locator("#file-text")).to_have_value("API: application programming interface.\n")
    expect(second.locator("[data-kept]")).to_have_text(mine)
    second.locator("#file-text").fill("API: application programming interface.\n" + mine)
    second.keyboard.press("Control+S")
    expect(second.locator(".notice.ok")).to_contain_text("Saved.")
    assert file_json(daemon, "glossary")["revision"] == 2


def test_s12_over_the_every_run_limit(start_daemon: Start, browse: Browse) -> None:
    daemon = start_daemon()
    page = browse(daemon).page()
    page.goto("/memory/files")
    row = page.locator('[data-file="organization"]')
    row.get_by_role("button", name="Load every run").click()
    expect(page.locator('[data-file="organization"] .badge')).to_have_text("⟳ Loaded every run")
    page.locator('[data-file="people"]').get_by_role("button", name="Load every run").click()
    expect(page.locator("#mode-error")).to_have_text(
        "At most 3 context files can load on every run. Switch one of About you, Voice or"
        " Organization to on-demand first."
    )
    highlighted = page.locator(".file-row.highlight")
    expect(highlighted).to_have_count(3)
    assert highlighted.evaluate_all("els => els.map(e => e.dataset.file)") == [
        "about_you",
        "organization",
        "voice",
    ]
    expect(page.locator('[data-file="people"] .badge')).to_have_text("Read on demand")
    marks = page.locator('nav.rail [data-every-run="1"]')
    expect(marks).to_have_count(3)
    shot(page, "14-every-run-limit")


def test_s20_saved_while_a_run_reads_it_and_editor_keys(
    start_daemon: Start, browse: Browse
) -> None:
    notes = long_notes(2000)

    def seed(app: App) -> None:
        ref = app.files.ref("notes", agent="research")
        app.files.save(ref, notes, base_revision=0, actor=USER)
        app.files.assemble("research", run_id="run-1000")  # a run that loaded revision 1

    daemon = start_daemon(seed=seed)
    page = browse(daemon).page()
    page.goto("/memory/agents/research/files/notes")
    text = page.locator("#file-text")
    text.focus()
    page.keyboard.press("Control+End")
    page.keyboard.type("One more line.\n")
    expect(page.locator("[data-unsaved]")).to_be_visible()
    page.keyboard.press("Control+S")
    expect(page.locator(".notice.ok")).to_contain_text("Saved.")
    expect(page.locator(".meter-panel")).to_contain_text(
        "Takes effect on the next run · 1 run in flight"
    )
    loads = daemon.client.get("/api/v1/runs/run-1000/context-loads").json()["loads"]
    assert {(x["ref"], x["revision"]) for x in loads if x["segment"] == "notes"} == {
        ("agent/research/notes", 1)
    }
    # Ctrl+Shift+P toggles Write / Preview; n and N jump between skipped blocks.
    page.keyboard.press("Control+Shift+P")
    expect(page.locator("#preview-pane")).to_be_visible()
    expect(page.locator("#tab-preview")).to_have_attribute("aria-selected", "true")
    page.locator("#preview-pane").click(position={"x": 5, "y": 5})
    page.keyboard.press("n")
    expect(page.locator("#preview-pane .skipped-block")).to_be_focused()
    page.keyboard.press("Shift+N")
    expect(page.locator("#preview-pane .skipped-block")).to_be_focused()
    page.keyboard.press("Control+Shift+P")
    expect(page.locator("#write-pane")).to_be_visible()
    page.goto("/memory/agents/research/files/notes/history")
    expect(page.locator("table")).to_contain_text("marina")
    page.locator("tr", has_text="marina").get_by_role("button", name="Restore").click()
    expect(page.locator(".notice.ok")).to_be_visible()
    assert file_json(daemon, "notes", agent="research")["body"] == notes


def test_s17_a_proposed_notes_change_is_applied_by_the_owner_with_apply(
    start_daemon: Start, browse: Browse
) -> None:
    numbers: list[int] = []

    def seed(app: App) -> None:
        ref = app.files.ref("notes", agent="research")
        app.files.save(ref, "Known: the CI is slow.\n", base_revision=0, actor=USER)
        for text in ("Staging is rebuilt nightly.", "Ledger imports run at 02:00."):
            proposal = app.files.update_notes(agent="research", text=text, run_id="run-17")
            assert proposal.written is False and proposal.proposal_id is not None
            numbers.append(proposal.proposal_id)

    daemon = start_daemon(seed=seed)
    page = browse(daemon).page()
    page.goto("/memory/agents/research/files/notes")
    panel = page.locator("section.proposals")
    expect(panel).to_contain_text("Proposed by research — waiting for you")
    expect(panel.locator("article.proposal")).to_have_count(2)
    first = panel.locator(f'[data-proposal="{numbers[0]}"]')
    expect(first.locator("[data-diff]")).to_contain_text("+Staging is rebuilt nightly.")
    assert file_json(daemon, "notes", agent="research")["revision"] == 1  # nothing written yet
    shot(page, "16-notes-proposals")
    first.get_by_role("button", name="Apply").click()
    expect(page.locator(".notice.ok")).to_contain_text(f"Applied proposal {numbers[0]}.")
    saved = file_json(daemon, "notes", agent="research")
    assert saved["revision"] == 2
    assert saved["body"] == "Known: the CI is slow.\nStaging is rebuilt nightly.\n"
    assert saved["updated_by"].startswith("user:")
    expect(page.locator("#file-text")).to_have_value(saved["body"])
    # The other proposal was made on revision 1: applying it now is refused, nothing written.
    page.locator(f'[data-proposal="{numbers[1]}"]').get_by_role("button", name="Apply").click()
    expect(page.locator(".notice.bad")).to_contain_text(
        "proposed this change on revision 1, and Notes is now at revision 2"
    )
    assert file_json(daemon, "notes", agent="research")["revision"] == 2
    page.locator(f'[data-proposal="{numbers[1]}"]').get_by_role("button", name="Dismiss").click()
    expect(page.locator(".notice.ok")).to_contain_text(f"Dismissed proposal {numbers[1]}")
    expect(page.locator("section.proposals")).to_have_count(0)
