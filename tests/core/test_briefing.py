"""Briefing composition (seed 000 REQ-14) and recall assembly (REQ-12), both pure."""

from __future__ import annotations

import re
import secrets

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetmem.core.briefing import (
    BRIEFING_RULES,
    MAX_BRIEFING_BYTES,
    RECALL_MAX_BYTES,
    BriefingInputs,
    Composed,
    assemble_recall,
    check_max_chars,
    collision_item,
    compose_briefing,
    episode_item,
    fact_item,
    iso,
    recent_run_item,
)
from fleetmem.core.episode_brief import EpisodeBrief
from fleetmem.core.fence import NonceCollision
from fleetmem.core.wrapper import Item, item_block, parse, render

REPO = "github.com/acme/api"
NOW = 1_800_000_000.0


def nonce() -> str:
    return secrets.token_hex(16)


def collision(i: int, **kw: object) -> Item:
    args: dict[str, object] = {
        "run_id": f"run-c{i}",
        "agent": "codex",
        "branch": "main",
        "strength": "branch",
        "last_seen": NOW - i,
        "files": ["billing/ledger.py", f"src/f{i}.py"],
        "overlap": [],
    }
    args.update(kw)
    return collision_item(**args)  # type: ignore[arg-type]


def recent(i: int) -> Item:
    return recent_run_item(
        run_id=f"run-r{i}",
        agent="api-fixer",
        adapter="claude-code",
        outcome="failed",
        reason="verify_failed",
        ended_at=NOW - 3600 * i,
        duration_ms=1_064_000,
        pull_request=f"https://github.com/acme/api/pull/{i}",
    )


def fact(i: int, text: str = "The settlement fixture writes rows in local time.") -> Item:
    return fact_item(
        fact_id=f"f_{i}",
        text=text,
        scope=f"project:{REPO}",
        status="live",
        confidence=0.9 - i / 100,
    )


def episode(
    i: int, text: str = "outcome: failed\nresult_excerpt: the ledger test is flaky"
) -> Item:
    return episode_item(
        episode_id=f"ep_{i:020d}",
        provider="builtin",
        text=text,
        run_id=f"run-e{i}",
        agent="api-fixer",
        adapter="claude-code",
        model="claude-sonnet-4-5",
        repo=REPO,
        branch="main",
        outcome="failed",
        started_at=NOW - 86400 * i,
    )


def brief(i: int, what: str = "Fixed the flaky ledger test.", **kw: object) -> EpisodeBrief:
    args: dict[str, object] = {
        "episode_id": f"ep_{i:020d}",
        "run_id": f"run-e{i}",
        "agent": "api-fixer",
        "branch": "main",
        "outcome": "failed",
        "started_at": NOW - 86400 * i,
        "reason": "verify_failed",
        "what": what,
        "files": ("billing/ledger.py", "tests/test_ledger.py"),
        "failures": (("AssertionError", 2),),
    }
    args.update(kw)
    return EpisodeBrief(**args)  # type: ignore[arg-type]


def tiny(kind: str, i: int) -> Item:
    return Item(kind=kind, text=str(i))


def seed_inputs(**kw: object) -> BriefingInputs:
    args: dict[str, object] = {
        "repo": REPO,
        "branch": "main",
        "collisions": [collision(i) for i in range(3)],
        "recent_runs": [recent(i) for i in range(5)],
        "facts": [fact(i) for i in range(20)],
        "episodes": [brief(i) for i in range(3)],
        "episodes_provider": "builtin",
    }
    args.update(kw)
    return BriefingInputs(**args)  # type: ignore[arg-type]


def sections_in(text: str) -> list[str]:
    return [s.name for s in parse(text)[0].sections]


# ---- the seed scenario -----------------------------------------------------------------------
def test_sections_keep_their_order_and_bounds() -> None:
    composed = compose_briefing(seed_inputs(), max_chars=2000, nonce=nonce())
    assert 0 < composed.chars <= 2000
    assert sections_in(composed.text) == ["collisions", "recent_runs", "facts", "episodes"]
    facts = parse(composed.text)[0].section("facts")
    assert facts is not None and facts.omitted == 20 - len(facts.items) > 0
    body = composed.text.split("<facts>", 1)[1].split("</facts>", 1)[0]
    assert body.rstrip("\n").endswith(f"({facts.omitted} more: call recall)")
    assert composed.shown["facts"] + composed.omitted["facts"] == 20


def test_the_composed_text_is_the_rendered_document() -> None:
    n = nonce()
    composed = compose_briefing(seed_inputs(), max_chars=4000, nonce=n)
    assert composed.document is not None
    assert render(composed.document, n) == composed.text
    assert parse(composed.text) == (composed.document, n)


@pytest.mark.parametrize(("name", "count"), [(r.name, r.max_items) for r in BRIEFING_RULES])
def test_each_section_has_its_item_cap(name: str, count: int) -> None:
    kinds = {"collisions": "run", "recent_runs": "run", "facts": "fact"}
    given = [brief(i, "", files=(), failures=()) if name == "episodes" else tiny(kinds[name], i)
             for i in range(30)]  # fmt: skip
    inputs = BriefingInputs(repo=REPO, **{name: given})  # type: ignore[arg-type]
    composed = compose_briefing(inputs, max_chars=4000, nonce=nonce())
    assert composed.shown[name] == count
    assert composed.omitted[name] == 30 - count


def test_no_section_takes_more_than_its_share() -> None:
    many = seed_inputs(
        collisions=[collision(i) for i in range(10)],
        facts=[fact(i) for i in range(50)],
        episodes=[brief(i) for i in range(3)],
    )
    for max_chars in (500, 1000, 2000, 3000, 4000):
        n = nonce()
        composed = compose_briefing(many, max_chars=max_chars, nonce=n)
        doc = parse(composed.text)[0]
        for rule in BRIEFING_RULES:
            section = doc.section(rule.name)
            assert section is not None
            used = sum(len(item_block(i, n)) for i in section.items)
            assert used <= max_chars * rule.share_percent // 100
        assert composed.chars <= max_chars


def test_an_item_too_big_for_its_share_is_dropped_whole_and_a_later_one_still_fits() -> None:
    big = fact(0, "x" * 900)
    small = fact(1, "short")
    composed = compose_briefing(
        BriefingInputs(repo=REPO, facts=[big, small]), max_chars=2000, nonce=nonce()
    )
    facts = parse(composed.text)[0].section("facts")
    assert facts is not None
    assert [i.get("id") for i in facts.items] == ["f_1"]
    assert facts.omitted == 1
    assert "x" * 10 not in composed.text  # never cut


def test_items_are_never_cut() -> None:
    texts = [f"fact number {i}: " + "word " * (i * 7) for i in range(30)]
    composed = compose_briefing(
        BriefingInputs(repo=REPO, facts=[fact(i, t) for i, t in enumerate(texts)]),
        max_chars=2000,
        nonce=nonce(),
    )
    facts = parse(composed.text)[0].section("facts")
    assert facts is not None
    for item in facts.items:
        assert item.text == texts[int(str(item.get("id"))[2:])]


def test_the_byte_cap_holds_with_wide_characters() -> None:
    wide = "🙂" * 300  # 4 bytes each
    inputs = BriefingInputs(
        repo=REPO,
        collisions=[collision(i, files=[wide]) for i in range(10)],
        recent_runs=[recent(i) for i in range(5)],
        facts=[fact(i, wide) for i in range(8)],
        episodes=[brief(i, wide, files=(wide,)) for i in range(3)],
    )
    composed = compose_briefing(inputs, max_chars=4000, nonce=nonce())
    assert composed.size_bytes <= MAX_BRIEFING_BYTES
    assert composed.chars <= 4000
    assert composed.size_bytes > 3000  # the byte cap, not the character cap, was the limit


def test_the_smallest_cap_holds_even_with_long_labels() -> None:
    long = "b" * 250
    inputs = seed_inputs(
        branch=long,
        episodes=[],
        episodes_provider="p" * 64,
        episodes_degraded="provider_unavailable",
        collisions=[collision(i) for i in range(999)],
    )
    composed = compose_briefing(inputs, max_chars=500, nonce=nonce())
    assert 0 < composed.chars <= 500
    assert sections_in(composed.text) == ["collisions", "recent_runs", "facts", "episodes"]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=500, max_value=4000),
    st.lists(st.text(max_size=300), max_size=12),
    st.lists(st.text(max_size=300), max_size=25),
    st.lists(
        st.tuples(st.text(max_size=600), st.lists(st.text(max_size=80), max_size=5)), max_size=4
    ),
)
def test_caps_hold_for_any_content(
    max_chars: int, paths: list[str], facts: list[str], episodes: list[tuple[str, list[str]]]
) -> None:
    n = nonce()
    inputs = BriefingInputs(
        repo=REPO,
        branch="main",
        collisions=[collision(i, files=paths) for i in range(len(paths))],
        recent_runs=[recent(i) for i in range(5)],
        facts=[fact(i, t) for i, t in enumerate(facts)],
        episodes=[
            brief(i, what, files=tuple(files), agent=files[0] if files else "api-fixer")
            for i, (what, files) in enumerate(episodes)
        ],
    )
    composed = compose_briefing(inputs, max_chars=max_chars, nonce=n)
    assert composed.chars <= max_chars
    assert composed.size_bytes <= MAX_BRIEFING_BYTES
    doc, parsed_nonce = parse(composed.text)
    assert (doc, parsed_nonce) == (composed.document, n)
    for name, given_items in (
        ("collisions", inputs.collisions),
        ("facts", inputs.facts),
        ("episodes", inputs.episodes),
    ):
        section = doc.section(name)
        assert section is not None
        assert len(section.items) + section.omitted == len(given_items)


# ---- determinism and emptiness -------------------------------------------------------------
def test_the_same_inputs_give_the_same_bytes() -> None:
    n = nonce()
    first = compose_briefing(seed_inputs(), max_chars=2000, nonce=n)
    second = compose_briefing(seed_inputs(), max_chars=2000, nonce=n)
    assert first.text == second.text
    other = nonce()
    third = compose_briefing(seed_inputs(), max_chars=2000, nonce=other)
    assert third.text.replace(other, n) == first.text


def test_outside_a_repository_the_briefing_is_empty() -> None:
    composed = compose_briefing(seed_inputs(repo=None), max_chars=2000, nonce=nonce())
    assert composed.text == "" and composed.empty and composed.document is None


def test_with_every_section_empty_the_briefing_is_empty() -> None:
    inputs = BriefingInputs(
        repo=REPO, branch="main", episodes_provider="builtin", episodes_degraded="x"
    )
    assert compose_briefing(inputs, max_chars=2000, nonce=nonce()).text == ""


def test_a_degraded_provider_is_named_in_the_episodes_section() -> None:
    inputs = seed_inputs(episodes=[], episodes_degraded="provider_unavailable")
    composed = compose_briefing(inputs, max_chars=2000, nonce=nonce())
    expected = f'<episodes repo="{REPO}" provider="builtin" degraded="provider_unavailable"/>'
    assert expected in composed.text
    assert composed.degraded == "provider_unavailable"


def test_the_cap_must_be_in_range() -> None:
    for bad in (499, 4001, 0, True):
        with pytest.raises(ValueError, match="briefing_max_chars"):
            check_max_chars(bad)
        with pytest.raises(ValueError, match="briefing_max_chars"):
            compose_briefing(seed_inputs(), max_chars=bad, nonce=nonce())
    assert check_max_chars(500) == 500 and check_max_chars(4000) == 4000


def test_a_nonce_in_an_item_asks_for_another() -> None:
    n = nonce()
    with pytest.raises(NonceCollision):
        compose_briefing(seed_inputs(facts=[fact(0, n)]), max_chars=2000, nonce=n)


def test_shown_fact_ids_are_listed_for_exposure_records() -> None:
    composed = compose_briefing(seed_inputs(), max_chars=4000, nonce=nonce())
    ids = composed.ids("facts")
    assert ids and all(re.fullmatch(r"f_\d+", i) for i in ids)
    assert len(ids) == composed.shown["facts"]
    assert Composed(text="", document=None, nonce=None).ids("facts") == ()


# ---- items ------------------------------------------------------------------------------------
def test_items_carry_their_provenance() -> None:
    item = recent(2)
    assert item.kind == "run" and not item.untrusted
    assert dict(item.provenance) == {
        "run": "run-r2",
        "agent": "api-fixer",
        "adapter": "claude-code",
        "outcome": "failed",
        "reason": "verify_failed",
        "ended": iso(NOW - 7200),
        "duration": "17m44s",
    }
    assert item.text == "pull request https://github.com/acme/api/pull/2"
    ep = episode(1)
    assert ep.untrusted and ep.get("provider") == "builtin" and ep.get("repo") == REPO
    assert fact(0).untrusted and fact(0).get("confidence") == 0.9


def test_a_collision_names_overlapping_files_first() -> None:
    item = collision(0, strength="files", overlap=["billing/ledger.py"])
    assert item.text == "editing your files: billing/ledger.py; also edited: src/f0.py"
    assert collision(0, files=[]).text == "no edits reported yet"
    many = collision(0, files=[f"f{i:02d}.py" for i in range(15)])
    assert many.text.endswith("(+5 more)")


# ---- recall assembly -------------------------------------------------------------------------
def test_recall_sections_run_facts_episodes_recent_runs() -> None:
    n = nonce()
    composed = assemble_recall(
        facts=[fact(i) for i in range(3)],
        episodes=[episode(i) for i in range(3)],
        recent_runs=[recent(i) for i in range(2)],
        nonce=n,
        repo=REPO,
        provider="builtin",
        degraded="embeddings_unavailable",
    )
    doc, parsed_nonce = parse(composed.text)
    assert parsed_nonce == n and doc == composed.document
    assert [s.name for s in doc.sections] == ["facts", "episodes", "recent_runs"]
    assert [len(s.items) for s in doc.sections] == [3, 3, 2]
    assert {i.kind for i in doc.sections[0].items} == {"fact"}
    assert {i.kind for i in doc.sections[1].items} == {"episode"}
    assert {i.kind for i in doc.sections[2].items} == {"run"}
    assert dict(doc.attrs) == {"repo": REPO, "degraded": "embeddings_unavailable", "truncated": 0}
    assert dict(doc.sections[1].attrs) == {"provider": "builtin"}
    assert composed.truncated == 0
    assert render(doc, n) == composed.text


def test_recall_drops_from_the_end_of_episodes_then_runs_then_facts() -> None:
    facts = [fact(i, f"fact {i} " + "f" * 1500) for i in range(8)]
    episodes = [episode(i, f"episode {i} " + "e" * 1990) for i in range(8)]
    runs = [recent(i) for i in range(5)]
    composed = assemble_recall(facts=facts, episodes=episodes, recent_runs=runs, nonce=nonce())
    assert composed.size_bytes <= RECALL_MAX_BYTES
    doc = parse(composed.text)[0]
    kept_episodes = [i.get("id") for i in doc.sections[1].items]
    assert kept_episodes == [e.get("id") for e in episodes[: len(kept_episodes)]]
    assert len(kept_episodes) < 8
    assert len(doc.sections[0].items) == 8 and len(doc.sections[2].items) == 5
    assert composed.truncated == 8 - len(kept_episodes)
    assert dict(doc.attrs)["truncated"] == composed.truncated


def test_recall_drops_runs_after_every_episode_then_facts() -> None:
    facts = [fact(i, f"fact {i} " + "f" * 1950) for i in range(10)]
    episodes = [episode(i, "e" * 1000) for i in range(3)]
    runs = [recent(i) for i in range(5)]
    composed = assemble_recall(facts=facts, episodes=episodes, recent_runs=runs, nonce=nonce())
    doc = parse(composed.text)[0]
    assert composed.size_bytes <= RECALL_MAX_BYTES
    assert doc.sections[1].items == () and doc.sections[2].items == ()
    kept = [i.get("id") for i in doc.sections[0].items]
    assert kept == [f.get("id") for f in facts[: len(kept)]] and len(kept) < 10
    assert composed.truncated == 3 + 5 + (10 - len(kept))


def test_recall_within_the_cap_keeps_everything() -> None:
    composed = assemble_recall(
        facts=[fact(i) for i in range(20)],
        episodes=[episode(i) for i in range(20)],
        recent_runs=[],
        nonce=nonce(),
    )
    assert composed.truncated == 0
    assert composed.shown == {"facts": 20, "episodes": 20, "recent_runs": 0}
