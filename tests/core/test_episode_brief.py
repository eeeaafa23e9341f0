"""The short episode form of briefings (seed 000 REQ-14, docs/wrapper.md): what it says, how
much of it fits, and that it stays labelled, fenced and parseable whatever the text holds."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetmem.core.briefing import (
    MAX_BRIEFING_BYTES,
    BriefingInputs,
    Composed,
    compose_briefing,
    fact_item,
    iso,
    recent_run_item,
)
from fleetmem.core.episode import FIELDS
from fleetmem.core.episode_brief import (
    MIN_WHAT_CHARS,
    EpisodeBrief,
    brief_from_episode,
    brief_text,
    first_sentence,
    full_provenance,
    shared_labels,
)
from fleetmem.core.fence import fold
from fleetmem.core.wrapper import ROOT, Item, Section, parse, sanitize_item
from tests.core.test_briefing import NOW, REPO, nonce
from tests.core.test_wrapper import _MARKER_TAG, HOSTILE


def brief(i: int, **kw: object) -> EpisodeBrief:
    """An episode with fleetmem-sized labels: ``ep_`` + 20 hex ids and ``run-`` + 16 hex runs."""
    args: dict[str, object] = {
        "episode_id": f"ep_{i:020x}",
        "run_id": f"run-{i:016x}",
        "agent": "api-fixer",
        "adapter": "claude-code",
        "model": "claude-sonnet-4-5",
        "branch": "main",
        "outcome": "failed",
        "started_at": NOW - 86400 * i,
        "reason": "verify_failed",
        "what": "Pinned the clock in tests/test_ledger.py; the settlement fixture still fails.",
        "files": ("billing/ledger.py", "tests/test_ledger.py", "billing/settlement.py"),
        "failures": (("test_failure", 2), ("lint", 1)),
    }
    args.update(kw)
    return EpisodeBrief(**args)  # type: ignore[arg-type]


def busy_sections() -> dict[str, object]:
    """Recent runs and facts as a repository with history has them: both over their share."""
    runs = [
        recent_run_item(
            run_id=f"run-{i:016x}",
            agent="api-fixer",
            adapter="claude-code",
            outcome="failed",
            reason="verify_failed",
            ended_at=NOW - 3600 * i,
            duration_ms=1_064_000,
            pull_request=f"https://github.com/acme/api/pull/{100 + i}",
        )
        for i in range(5)
    ]
    facts = [
        fact_item(
            fact_id=f"f_{i:016x}",
            text=f"Fact {i}: the settlement fixture writes rows in local time, not UTC.",
            scope=f"project:{REPO}",
            status="live",
            confidence=0.9,
            created_at=NOW - 60 * i,
        )
        for i in range(12)
    ]
    return {"recent_runs": runs, "facts": facts}


def inputs(episodes: list[EpisodeBrief], **kw: object) -> BriefingInputs:
    """A one-repository briefing's inputs with busy recent-runs and facts sections."""
    args: dict[str, object] = {
        "repo": REPO,
        "branch": "main",
        "episodes": episodes,
        "episodes_provider": "builtin",
        **busy_sections(),
    }
    args.update(kw)
    return BriefingInputs(**args)  # type: ignore[arg-type]


def compose(
    episodes: list[EpisodeBrief], max_chars: int, n: str | None = None, **kw: object
) -> Composed:
    return compose_briefing(inputs(episodes, **kw), max_chars=max_chars, nonce=n or nonce())


# ---- how many fit ---------------------------------------------------------------------------
MIXED = [
    brief(0),
    brief(1, agent="codex", branch="fix/flaky-ledger", outcome="succeeded", reason="completed"),
    brief(2, agent="test-writer", branch="agent/test-writer-7", outcome="timed_out"),
    brief(3),
    brief(4, agent="codex"),
]


@pytest.mark.parametrize(
    ("episodes", "label"),
    [([brief(i) for i in range(5)], "one agent on main"), (MIXED, "mixed agents and branches")],
)
def test_a_default_briefing_shows_at_least_two_episodes_and_4000_shows_three(
    episodes: list[EpisodeBrief], label: str
) -> None:
    default = compose(episodes, 2000)
    doc = parse(default.text)[0]
    section = doc.section("episodes")
    assert section is not None
    assert len(section.items) >= 2, label
    assert section.omitted == len(episodes) - len(section.items)  # counted, pointer to recall
    assert default.text.count("more: call recall)") >= 1
    assert default.chars <= 2000 and default.size_bytes <= MAX_BRIEFING_BYTES
    # Sections fill in order: the earlier ones show what they would without any episode.
    without = compose([], 2000)
    for name in ("recent_runs", "facts"):
        assert default.shown[name] == without.shown[name] > 0
    roomy = compose(episodes, 4000)
    assert roomy.shown["episodes"] == 3 and roomy.chars <= 4000
    # With room, the episodes say what happened; recall is still the place for all of it.
    texts = [i.text for i in parse(roomy.text)[0].sections[3].items]
    assert any("verify_failed" in t for t in texts) and any("files: " in t for t in texts)


def test_more_episodes_beat_longer_texts_and_room_buys_detail() -> None:
    episodes = [brief(i) for i in range(3)]
    small, large = compose(episodes, 2000), compose(episodes, 4000)
    small_texts = [i.text for i in parse(small.text)[0].sections[3].items]
    large_texts = [i.text for i in parse(large.text)[0].sections[3].items]
    assert len(small_texts) == 2 and len(large_texts) == 3
    assert sum(map(len, large_texts[:2])) > sum(map(len, small_texts))


def test_without_busy_sections_every_episode_gets_its_full_short_form() -> None:
    alone = compose_briefing(
        BriefingInputs(repo=REPO, episodes=[brief(0)], episodes_provider="builtin"),
        max_chars=2000,
        nonce=nonce(),
    )
    [item] = parse(alone.text)[0].sections[3].items
    assert item.text == (
        "verify_failed: Pinned the clock in tests/test_ledger.py; the settlement fixture"
        " still fails.\n"
        "files: billing/ledger.py, tests/test_ledger.py, billing/settlement.py\n"
        "failed checks: test_failure x2, lint"
    )


# ---- provenance ---------------------------------------------------------------------------
def test_parse_back_gives_every_episode_its_full_provenance() -> None:
    episodes = [
        brief(0),
        brief(1, agent="codex", adapter="codex", model="gpt-5-codex"),
        brief(2, branch="fix/ledger", model=None),
    ]
    n = nonce()
    composed = compose(episodes, 4000, n, recent_runs=[], facts=[])
    doc, parsed_nonce = parse(composed.text)
    assert (doc, parsed_nonce) == (composed.document, n)
    section = doc.section("episodes")
    assert section is not None and len(section.items) == 3
    # The section carries what every item shares, and the labels most of them have; no
    # default model, since one episode has none recorded.
    assert dict(section.attrs) == {
        "repo": REPO,
        "provider": "builtin",
        "agent": "api-fixer",
        "adapter": "claude-code",
        "branch": "main",
    }
    assert [dict(i.provenance).get("agent") for i in section.items] == [None, "codex", None]
    assert [dict(i.provenance).get("adapter") for i in section.items] == [None, "codex", None]
    assert [dict(i.provenance).get("model") for i in section.items] == [
        "claude-sonnet-4-5",
        "gpt-5-codex",
        None,
    ]
    full = [full_provenance(section, item) for item in section.items]
    expected = [
        {
            "id": e.episode_id,
            "run": e.run_id,
            "agent": e.agent,
            "adapter": e.adapter,
            "model": e.model,
            "repo": REPO,
            "branch": e.branch,
            "outcome": e.outcome,
            "started": iso(e.started_at),
            "provider": "builtin",
        }
        for e in episodes
    ]
    # Recall's labels in recall's order; absent values stay absent.
    assert full == [tuple((k, v) for k, v in e.items() if v is not None) for e in expected]
    assert all(i.kind == "episode" and i.untrusted for i in section.items)
    assert composed.ids("episodes") == tuple(e.episode_id for e in episodes)


def test_shared_labels_never_guess_a_missing_branch() -> None:
    agent, adapter, model = (
        ("agent", "api-fixer"),
        ("adapter", "claude-code"),
        ("model", "claude-sonnet-4-5"),
    )
    assert shared_labels([brief(0), brief(1, branch=None)]) == (agent, adapter, model)
    assert shared_labels([brief(0), brief(1, model=None)]) == (agent, adapter, ("branch", "main"))
    assert shared_labels([brief(0, agent="a"), brief(1, agent="b")]) == (
        adapter,
        model,
        ("branch", "main"),
    )
    assert shared_labels([brief(0)]) == (agent, adapter, model, ("branch", "main"))
    assert shared_labels([]) == ()
    detached = compose([brief(0, branch=None), brief(1)], 4000, recent_runs=[], facts=[])
    section = parse(detached.text)[0].sections[3]
    assert [dict(full_provenance(section, i)).get("branch") for i in section.items] == [
        None,
        "main",
    ]


# ---- hostile text ---------------------------------------------------------------------------
@pytest.mark.parametrize("hostile", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_summary_files_and_failures_stay_fenced_and_sanitised(hostile: str) -> None:
    episodes = [
        brief(0, what=hostile, files=(hostile, "a.py"), failures=((hostile, 2),), reason=hostile),
        brief(1, what=f"before {hostile} after", files=(f"src/{hostile}.py",)),
        brief(2),
    ]
    n = nonce()
    composed = compose(episodes, 4000, n)
    doc, parsed_nonce = parse(composed.text)
    assert (doc, parsed_nonce) == (composed.document, n)
    section = doc.section("episodes")
    assert section is not None and section.items
    assert len(section.items) + section.omitted == 3
    ids = [i.get("id") for i in section.items]
    assert ids == sorted(ids) and set(ids) <= {e.episode_id for e in episodes}
    for item in section.items:
        assert item.untrusted and sanitize_item(item) == item
        assert not _MARKER_TAG.search(fold(item.text)) and "<|" not in fold(item.text)
    # The nonce is only on structural lines: the root's two and one closing line per item.
    shown = sum(len(s.items) for s in doc.sections)
    assert composed.text.count(n) == 2 + shown
    lines = [line for line in composed.text.split("\n") if n in line]
    assert lines[0].startswith(f"<{ROOT} ") and lines[-1] == f'</{ROOT} nonce="{n}">'
    assert all(re.fullmatch(rf'</(fact|episode|run) nonce="{n}">', x) for x in lines[1:-1])


# ---- determinism ----------------------------------------------------------------------------
def test_the_same_episodes_give_the_same_bytes() -> None:
    n = nonce()
    first, second = compose(MIXED, 2000, n), compose(list(MIXED), 2000, n)
    assert first.text == second.text
    other = nonce()
    assert compose(MIXED, 2000, other).text.replace(other, n) == first.text


# ---- the text itself ------------------------------------------------------------------------
def test_the_text_gives_room_to_the_most_telling_parts_first() -> None:
    b = brief(0)
    assert brief_text(b, 0) == ""
    # The reason first, then one file, then one failure class, then what happened, then more.
    assert brief_text(b, 14) == "verify_failed"
    assert brief_text(b, 50) == "verify_failed\nfiles: billing/ledger.py (+2 more)"
    assert brief_text(b, 115) == (
        "verify_failed\nfiles: billing/ledger.py, tests/test_ledger.py (+1 more)\n"
        "failed checks: test_failure x2, lint"
    )
    assert brief_text(b, 140) == (
        "verify_failed: Pinned the clock in tests/test_ledger.py; the…\n"
        "files: billing/ledger.py (+2 more)\nfailed checks: test_failure x2, lint"
    )
    plain = brief(0, outcome="succeeded", reason="completed", failures=())
    assert brief_text(plain, 400).startswith("Pinned the clock")  # "completed" adds nothing


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=400),
    st.text(max_size=400),
    st.text(max_size=30),
    st.lists(st.text(min_size=1, max_size=60), max_size=6),
    st.lists(st.tuples(st.text(min_size=1, max_size=30), st.integers(1, 9)), max_size=4),
)
def test_the_text_never_exceeds_its_budget(
    budget: int, what: str, reason: str, files: list[str], failures: list[tuple[str, int]]
) -> None:
    b = brief(0, what=what, reason=reason, files=tuple(files), failures=tuple(failures))
    text = brief_text(b, budget)
    assert len(text) <= budget
    assert brief_text(b, budget) == text


def test_a_shortened_line_ends_at_a_word_or_not_at_all() -> None:
    long = brief(0, reason="", files=(), failures=(), what="word " * 40)
    assert brief_text(long, 50) == "word " * 9 + "word…"
    assert brief_text(long, MIN_WHAT_CHARS + 1) == ""  # "word word word word word…" says little
    assert (
        brief_text(brief(0, what="x" * 200, reason="", files=(), failures=()), 100) == ""
    )  # no word to end at


# ---- from the stored episode ------------------------------------------------------------------
STORED = {
    name: None for name in FIELDS
} | {  # the JSON the assembler stores (core/episode.py), trimmed to what matters here
    "reason": "verify_failed",
    "files_touched": ["billing/ledger.py", "tests/test_ledger.py"],
    "verify_failures": [{"error_class": "test_failure", "count": 2}],
    "result_excerpt": "The ledger test is flaky. I pinned the clock.\nMore detail follows.",
}


def from_stored(body: dict[str, object], summary: str | None = None) -> EpisodeBrief:
    return brief_from_episode(
        episode_id="ep_1",
        run_id="run-1",
        agent="api-fixer",
        branch="main",
        outcome="failed",
        started_at=NOW,
        body=body,
        summary=summary,
    )


def test_a_brief_is_made_from_the_stored_episode() -> None:
    made = from_stored(STORED)
    assert made.what == "The ledger test is flaky."  # the excerpt's first sentence
    assert made.files == ("billing/ledger.py", "tests/test_ledger.py")
    assert made.failures == (("test_failure", 2),) and made.reason == "verify_failed"
    assert from_stored(STORED, summary="A model's summary.\nTwo lines.").what == (
        "A model's summary. Two lines."
    )
    assert from_stored({**STORED, "summary": "Stored summary."}).what == "Stored summary."


def test_malformed_stored_fields_are_skipped_not_trusted() -> None:
    odd = from_stored(
        {
            "reason": 7,
            "files_touched": ["ok.py", 3, "", None],
            "verify_failures": [
                {"error_class": "x", "count": "2"},
                "junk",
                {"error_class": "y", "count": 1},
            ],
            "result_excerpt": ["not", "text"],
        }
    )
    assert (odd.reason, odd.files, odd.failures, odd.what) == ("", ("ok.py",), (("y", 1),), "")
    assert (
        from_stored({}).files == ()
        and brief_from_episode(
            episode_id="e", run_id="r", agent="a", branch=None, outcome="o", started_at=0, body=None
        ).what
        == ""
    )


def test_first_sentence() -> None:
    assert first_sentence("One. Two.") == "One."
    assert first_sentence("No end\nat all") == "No end at all"
    assert first_sentence("v1.2 is out! Then more") == "v1.2 is out!"


def test_full_provenance_of_an_item_without_a_section_is_its_own() -> None:
    item = Item(kind="episode", text="", provenance=(("run", "r"), ("id", "e")), untrusted=True)
    assert full_provenance(Section("episodes"), item) == (("id", "e"), ("run", "r"))


@pytest.mark.parametrize("max_chars", [500, 800, 2000])
def test_long_shared_labels_never_break_the_caps_or_lose_provenance(max_chars: int) -> None:
    long = [brief(i, agent="a" * 200, branch="b" * 250) for i in range(3)]
    composed = compose(long, max_chars, branch="b" * 250, episodes_provider="p" * 64)
    assert composed.chars <= max_chars and composed.size_bytes <= MAX_BRIEFING_BYTES
    doc, _ = parse(composed.text)
    section = doc.section("episodes")
    assert section is not None and len(section.items) + section.omitted == 3
    for item in section.items:
        full = dict(full_provenance(section, item))
        assert (full["repo"], full["agent"], full["branch"]) == (REPO, "a" * 200, "b" * 250)


def test_adapter_and_model_give_way_when_carrying_them_would_show_fewer_episodes() -> None:
    # Three agents on three adapters and models: no label is shared, so every item would
    # carry its own adapter and model.
    several = [
        brief(0, agent="api-fixer", adapter="claude-code", model="claude-sonnet-4-5"),
        brief(1, agent="reviewer", adapter="codex", model="gpt-5-codex-high"),
        brief(2, agent="test-writer", adapter="command", model="local-qwen-coder-32b"),
    ]
    lean = [replace(b, adapter=None, model=None) for b in several]
    gave_way = 0
    for max_chars in range(1500, 2800, 25):
        n = nonce()
        chosen = compose(several, max_chars, n)
        labelled = compose_briefing_labelled(several, max_chars, n)
        without = compose_briefing_labelled(lean, max_chars, n)
        if without.shown["episodes"] > labelled.shown["episodes"]:
            gave_way += 1
            assert chosen.text == without.text
            section = parse(chosen.text)[0].section("episodes")
            assert section is not None
            assert all("adapter" not in dict(full_provenance(section, i)) for i in section.items)
        else:
            assert chosen.text == labelled.text
    assert gave_way, "some size shows more episodes without the labels"
    # With room for every episode, each keeps the labels recall gives it.
    roomy = parse(compose(several, 4000).text)[0].section("episodes")
    assert roomy is not None and len(roomy.items) == 3
    assert [dict(full_provenance(roomy, i)).get("model") for i in roomy.items] == [
        b.model for b in several
    ]
    # One agent's runs share adapter and model: the section says them once and the default
    # briefing keeps them.
    same = parse(compose([brief(i) for i in range(3)], 2000).text)[0].section("episodes")
    assert same is not None and len(same.items) >= 2
    assert dict(same.attrs)["adapter"] == "claude-code"
    assert dict(same.attrs)["model"] == "claude-sonnet-4-5"


def compose_briefing_labelled(episodes: list[EpisodeBrief], max_chars: int, n: str) -> Composed:
    """The document with the episodes' labels as given (no fallback to fewer labels)."""
    from fleetmem.core import briefing

    return briefing._compose(inputs(episodes), max_chars=max_chars, nonce=n)
