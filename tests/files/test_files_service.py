"""ContextFileService over a real SQLite store: files, modes, meters, revisions, concurrency."""

from __future__ import annotations

import threading

import pytest

from fleetmem.core.contextfiles import MAX_FILE_BYTES
from fleetmem.errors import CapReached, InvalidInput, NotFound, RateLimited, StaleRevision
from fleetmem.service.files import Actor, ContextFileService
from fleetmem.store.base import Store
from fleetmem.tokenize import get_tokenizer
from tests.conftest import reopen
from tests.files.conftest import DEV, MARINA, START, Clock, ServiceFactory, corpus

TOK = get_tokenizer()


def text_of_tokens(tokens: int, unit: str = "Always check the staging branch first.\n") -> str:
    text = unit * (tokens // TOK.count(unit) + 2)
    while TOK.count(text) > tokens:
        text = text[:-1]
    assert TOK.count(text) == tokens
    return text


# ---- FR-25 to FR-27: six files, created empty, fixed set, default modes ----------------------
def test_six_files_exist_empty_from_the_first_visit(files: ContextFileService) -> None:
    views = files.list_files()
    assert [v.ref.spec.title for v in views] == [
        "About you", "Organization", "People", "Glossary", "Voice", "Roster",
    ]  # fmt: skip
    assert all(v.body == "" and v.revision == 0 for v in views)
    assert [v.ref.name for v in views if v.mode == "every_run"] == ["about_you", "voice"]
    history = files.history(files.ref("glossary"))
    assert [(r.revision, r.author_kind, r.action) for r in history] == [(0, "system", "created")]
    with pytest.raises(InvalidInput):
        files.ref("handbook")  # no create, no rename: the set is fixed


# ---- S5: write a shared context file ---------------------------------------------------------
def test_s5_voice_shows_its_share_of_the_workspace_budget(files: ContextFileService) -> None:
    voice = text_of_tokens(340, "Short sentences. No exclamation marks. Sign off with a name.\n")
    view = files.save(files.ref("voice"), voice, base_revision=0, actor=MARINA)
    assert view.revision == 1 and view.mode == "every_run"
    meter = view.meter
    assert (meter.used, meter.budget, meter.state) == (340, 1500, "under")
    assert meter.report is not None and not meter.report.truncated
    assert meter.shared_with == ("About you",)
    context = files.assemble("research-agent")
    assert voice in context.text  # the next run of every agent carries it


# ---- S12 / FR-28: at most three every-run files ----------------------------------------------
def test_s12_a_fourth_every_run_file_is_refused_naming_the_three(
    files: ContextFileService,
) -> None:
    files.set_mode("organization", "every-run", actor=MARINA)
    with pytest.raises(CapReached) as caught:
        files.set_mode("glossary", "every-run", actor=MARINA)
    message = str(caught.value)
    assert message.startswith(
        "At most 3 context files can load on every run. Switch one of About you, Voice or"
        " Organization to on-demand first."
    )
    assert files.get(files.ref("glossary")).mode == "on_demand"
    files.set_mode("voice", "on-demand", actor=MARINA)
    assert files.set_mode("glossary", "every-run", actor=MARINA).mode == "every_run"
    # Setting a file to the mode it has is not a fourth file.
    assert files.set_mode("glossary", "every-run", actor=MARINA).mode == "every_run"


@pytest.mark.parametrize(
    ("agent", "repo", "field"),
    [
        ("cudo", "\x1b\u00bf|bad repo", "repo"),  # found by schemathesis: repo was ignored
        ("Bad Agent!", "github.com/acme/api", "agent"),
    ],
)
def test_listing_an_agent_and_a_repository_at_once_is_refused_naming_the_field(
    files: ContextFileService, agent: str, repo: str, field: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        files.list_files(agent=agent, repo=repo)
    assert caught.value.field == field
    with pytest.raises(NotFound, match="name an agent or a repository, not both"):
        files.list_files(agent="cudo", repo="github.com/acme/api")  # both valid: no such files
    assert next(v.ref.name for v in files.list_files(agent="cudo")) == "identity"


def test_the_limit_holds_when_two_writers_race(make_files: ServiceFactory) -> None:
    a, b = make_files(), make_files()
    a.list_files()
    barrier = threading.Barrier(2)
    results: list[str] = []

    def switch(service: ContextFileService, name: str) -> None:
        barrier.wait()
        try:
            service.set_mode(name, "every-run", actor=MARINA)
            results.append("ok")
        except CapReached:
            results.append("refused")

    threads = [
        threading.Thread(target=switch, args=(a, "people")),
        threading.Thread(target=switch, args=(b, "roster")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["ok", "refused"]
    assert sum(v.mode == "every_run" for v in a.list_files()) == 3


# ---- FR-29: one shared budget, split in proportion when over ---------------------------------
def test_every_run_files_share_1500_tokens_in_proportion(files: ContextFileService) -> None:
    about = text_of_tokens(1000, "I run a small design studio in Lisbon.\n")
    voice = text_of_tokens(2000, "Short sentences. No exclamation marks.\n")
    files.save(files.ref("about_you"), about, base_revision=0, actor=MARINA)
    files.save(files.ref("voice"), voice, base_revision=0, actor=MARINA)
    a = files.get(files.ref("about_you")).meter
    v = files.get(files.ref("voice")).meter
    assert (a.budget, v.budget) == (500, 1000)
    assert a.state == v.state == "over" and a.used <= 500 and v.used <= 1000
    segment = files.assemble("any-agent").assembly.segment("workspace_context")
    assert [p.report.used for p in segment.parts] == [a.used, v.used]
    assert segment.used <= 1500 and segment.budget == 1500


def test_a_short_every_run_file_beside_a_long_one_reaches_the_agent_whole(
    files: ContextFileService,
) -> None:
    about = "I run a small design studio in Lisbon; call me Marina, please.\n"  # a few tokens
    voice = text_of_tokens(3000, "Short sentences. No exclamation marks. Plain words.\n")
    files.save(files.ref("about_you"), about, base_revision=0, actor=MARINA)
    files.save(files.ref("voice"), voice, base_revision=0, actor=MARINA)
    a = files.get(files.ref("about_you")).meter
    v = files.get(files.ref("voice")).meter
    assert a.state != "over" and a.report is not None and not a.report.truncated
    assert a.budget + v.budget == 1500 and v.budget == 1500 - TOK.count(about)
    context = files.assemble("any-agent").text
    assert about in context
    region = v.report.skipped if v.report is not None else None
    assert region is not None and voice[region.char_start - 1] == "\n"  # cut on a line
    assert v.report is not None and v.report.skipped_tokens == TOK.count(voice) - v.budget


# ---- FR-30: on-demand files have no budget ---------------------------------------------------
def test_on_demand_files_have_no_budget_and_stay_out_of_runs(files: ContextFileService) -> None:
    glossary = corpus()["europe_mixed.md"]
    view = files.save(files.ref("glossary"), glossary, base_revision=0, actor=MARINA)
    assert view.meter.budget is None and view.meter.state == "on_demand"
    assert view.meter.tokens == TOK.count(glossary)
    assert glossary not in files.assemble("research-agent").text


# ---- FR-31: 64 KB ----------------------------------------------------------------------------
def test_a_64_kb_file_is_accepted_and_one_byte_more_refused(files: ContextFileService) -> None:
    ref = files.ref("people")
    body = ("Marina owns billing; Dev owns ingestion. " * 2000)[:MAX_FILE_BYTES]
    assert files.save(ref, body, base_revision=0, actor=MARINA).revision == 1
    with pytest.raises(InvalidInput, match="at most 65,536 bytes"):
        files.save(ref, body + "x", base_revision=1, actor=MARINA)
    assert files.get(ref).revision == 1


# ---- FR-32 / S11: two people edit the same file ----------------------------------------------
def test_s11_the_second_save_is_refused_and_nothing_is_overwritten(
    files: ContextFileService,
) -> None:
    ref = files.ref("glossary")
    files.save(ref, "invoice: a bill we send\n", base_revision=0, actor=MARINA)
    with pytest.raises(StaleRevision) as caught:
        files.save(ref, "invoice: what we pay\n", base_revision=0, actor=DEV)
    error = caught.value
    assert (error.base_revision, error.current_revision) == (0, 1)
    assert error.changed_by == "user:marina" and error.code == "stale_revision"
    assert "your text is kept" in str(error)
    assert files.get(ref).body == "invoice: a bill we send\n"
    assert files.save(ref, "invoice: what we pay\n", base_revision=1, actor=DEV).revision == 2


def test_two_concurrent_stale_saves_exactly_one_wins(
    make_files: ServiceFactory, store: Store, clock: Clock
) -> None:
    # Two services over two connections to the same file, saving at the same instant.
    second = reopen(store)
    try:
        a = make_files()
        b = ContextFileService(store=second, settings=a._settings, clock=clock)
        ref = a.ref("roster")
        a.save(ref, "v1\n", base_revision=0, actor=MARINA)
        barrier = threading.Barrier(2)
        outcome: dict[str, str] = {}

        def save(service: ContextFileService, who: str) -> None:
            barrier.wait()
            try:
                service.save(ref, f"{who} wrote this\n", base_revision=1, actor=Actor("user", who))
                outcome[who] = "saved"
            except StaleRevision as exc:
                outcome[who] = f"stale@{exc.current_revision}"

        threads = [
            threading.Thread(target=save, args=(a, "marina")),
            threading.Thread(target=save, args=(b, "dev")),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcome.values()) == ["saved", "stale@2"]
        winner = next(who for who, result in outcome.items() if result == "saved")
        final = a.get(ref)
        assert final.revision == 2 and final.body == f"{winner} wrote this\n"
        assert [r.revision for r in a.history(ref)] == [2, 1, 0]
    finally:
        second.close()


# ---- FR-33: secrets --------------------------------------------------------------------------
def test_a_secret_is_refused_naming_the_field_never_the_value(files: ContextFileService) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.raises(InvalidInput) as caught:
        files.save(
            files.ref("notes", agent="ops"), f"deploy with {token}\n", base_revision=0,
            actor=MARINA,
        )  # fmt: skip
    error = caught.value
    assert error.field == "text" and "github_token" in str(error)
    assert token not in str(error) and token[4:20] not in str(error)
    assert files.get(files.ref("notes", agent="ops")).revision == 0


# ---- FR-38 / FR-39: revisions kept, attributed, restorable -----------------------------------
def test_retention_keeps_the_last_20_plus_every_revision_younger_than_30_days(
    files: ContextFileService, clock: Clock
) -> None:
    ref = files.ref("role", agent="research-agent")
    day = 86_400.0
    for n in range(1, 31):  # revision n is written on day n - 1
        files.save(ref, f"revision {n}\n", base_revision=n - 1, actor=MARINA)
        clock.advance(day)
    assert [r.revision for r in files.history(ref)] == list(range(30, -1, -1))  # all young
    clock.now = START + 35 * day  # revisions written before day 5 are now older than 30 days
    files.save(ref, "revision 31\n", base_revision=30, actor=MARINA)
    # The last 20 are 12..31; 6..11 stay because they are younger than 30 days.
    assert [r.revision for r in files.history(ref)] == list(range(31, 5, -1))
    clock.now = START + 70 * day
    files.save(ref, "revision 32\n", base_revision=31, actor=MARINA)
    assert [r.revision for r in files.history(ref)] == list(range(32, 12, -1))


def test_restore_creates_a_new_attributed_revision(files: ContextFileService) -> None:
    ref = files.ref("identity", agent="research-agent")
    files.save(ref, "Calm and precise.\n", base_revision=0, actor=MARINA)
    files.save(ref, "Loud.\n", base_revision=1, actor=DEV)
    view = files.restore(ref, 1, actor=MARINA)
    assert (view.revision, view.body, view.updated_by) == (3, "Calm and precise.\n", "user:marina")
    top = files.history(ref)[0]
    assert (top.action, top.restored_from, top.author) == ("restore", 1, "marina")
    assert files.revision(ref, 2).body == "Loud.\n"  # history is never rewritten
    with pytest.raises(NotFound):
        files.revision(ref, 99)


# ---- S18 / NFR-3: another workspace is invisible ---------------------------------------------
def test_another_workspace_sees_nothing_and_gets_not_found(make_files: ServiceFactory) -> None:
    ours, theirs = make_files(), make_files(workspace="acme")
    ref = ours.ref("notes", agent="research-agent")
    ours.save(ref, "Only ours.\n", base_revision=0, actor=MARINA)
    assert theirs.get(ref).body == "" and theirs.get(ref).revision == 0
    with pytest.raises(NotFound):
        theirs.revision(ref, 1)
    assert theirs.history(ref) == []
    assert theirs.listing().agents == ()
    assert "Only ours." not in theirs.assemble("research-agent").text
    assert theirs.activity() == []


# ---- the activity feed (NFR-5) and rate limits (NFR-6) ---------------------------------------
def test_every_write_lands_in_the_activity_feed(files: ContextFileService) -> None:
    ref = files.ref("voice")
    files.save(ref, "a\n", base_revision=0, actor=MARINA)
    files.set_mode("voice", "on-demand", actor=DEV)
    files.restore(ref, 0, actor=MARINA)
    actions = [(a.action, a.actor, a.ref, a.revision) for a in files.activity()]
    assert actions == [
        ("restore", "marina", "workspace/voice", 2),
        ("mode", "dev", "workspace/voice", 1),
        ("save", "marina", "workspace/voice", 1),
    ]


def test_sixty_writes_a_minute_per_user(files: ContextFileService, clock: Clock) -> None:
    ref = files.ref("roster")
    for n in range(60):
        files.save(ref, f"{n}\n", base_revision=n, actor=MARINA)
    with pytest.raises(RateLimited) as caught:
        files.save(ref, "61\n", base_revision=60, actor=MARINA)
    assert caught.value.retry_after >= 1
    files.save(ref, "another user\n", base_revision=60, actor=DEV)  # limits are per user
    clock.advance(61)
    files.save(ref, "later\n", base_revision=61, actor=MARINA)


# ---- unicode tricks through the service ------------------------------------------------------
def test_a_bidi_override_is_refused_and_crlf_is_normalized(files: ContextFileService) -> None:
    ref = files.ref("glossary")
    with pytest.raises(InvalidInput, match="RIGHT-TO-LEFT OVERRIDE at line 2"):
        files.save(ref, "ok\nrefund \u202e0001$\n", base_revision=0, actor=MARINA)
    view = files.save(ref, "\ufeffa\r\nb\r\n", base_revision=0, actor=MARINA)
    assert view.body == "a\nb\n"
