"""The fence against a hostile corpus made fresh each run (tests/fence_oracle.py).

Each hostile string goes into every text and label field a wrapper document or a context
has; the documented-format reader then checks that nothing but fleetmem's template lines lies
outside the fences, and that the string's payload word is found only inside them.
"""

from __future__ import annotations

import random
import secrets
import sys
import unicodedata

import pytest

from fleetmem.core import confusables
from fleetmem.core import fence as fence_module
from fleetmem.core.briefing import (
    BriefingInputs,
    assemble_recall,
    collision_item,
    compose_briefing,
    episode_item,
    fact_item,
    recent_run_item,
)
from fleetmem.core.context import SEGMENTS, PartInput, SegmentInput, assemble
from fleetmem.core.episode_brief import brief_from_episode
from fleetmem.core.fence import fence_block, sanitize
from fleetmem.core.wrapper import MARKER_NAMES, parse
from fleetmem.tokenize import get_tokenizer
from tests.fence_oracle import (
    PAYLOAD,
    Outside,
    Split,
    block_outside,
    context_outside,
    hostile_corpus,
    wrapper_outside,
)
from tests.fence_oracle import _look_alike as look_alike

RNG = random.Random(secrets.randbits(64))
CORPUS = hostile_corpus(RNG)
REPO = "github.com/acme/api"
TITLES = {s.title for s in SEGMENTS} | {
    "About you", "Organization", "People", "Glossary", "Voice", "Roster",
}  # fmt: skip


def test_the_corpus_is_large_and_fresh() -> None:
    assert len(CORPUS) >= 60
    assert len(set(CORPUS)) == len(CORPUS)
    assert hostile_corpus() != hostile_corpus()  # new random values every call


def test_every_decomposed_bracket_is_a_known_opener() -> None:
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        base = "".join(
            c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c)
        )
        if base == "<":
            assert char in confusables.LESS_THAN, hex(code)
        if base == "[":
            assert char in confusables.SQUARE, hex(code)


def test_random_look_alikes_of_every_family_are_neutralised() -> None:
    rng = random.Random(secrets.randbits(64))
    for _ in range(400):
        hostile = look_alike(rng)
        clean = sanitize(hostile, MARKER_NAMES)
        assert clean.startswith(("&lt;", "&#91;")), repr(hostile)
        assert hostile[0] not in clean, repr(hostile)


def _payloads(split: Split) -> tuple[set[str], set[str]]:
    outside = {m for line in split.outside for m in PAYLOAD.findall(line)}
    inside = {m for body in split.inside for m in PAYLOAD.findall(body)}
    return outside, inside


def _briefing_inputs(h: str, branch: str) -> BriefingInputs:
    brief = brief_from_episode(
        episode_id="ep_1",
        run_id="run-1",
        agent=h,
        adapter=h,
        model=h,
        branch=h,
        outcome="failed",
        started_at=1_764_000_000.0,
        body={
            "reason": h,
            "summary": h,
            "files_touched": [h],
            "verify_failures": [{"error_class": h, "count": 2}],
        },
    )
    return BriefingInputs(
        repo=REPO,
        branch=branch,
        collisions=[
            collision_item(
                run_id="run-2", agent=h, branch=h, strength="files", last_seen=1.0,
                files=[h], overlap=[h],
            )
        ],
        recent_runs=[
            recent_run_item(
                run_id="run-3", agent=h, adapter=h, outcome="failed", reason=h,
                ended_at=2.0, duration_ms=1000, branch=h, pull_request=h,
            )
        ],
        facts=[fact_item(fact_id="f_1", text=h, scope="workspace", agent=h, run_id=h)],
        episodes=[brief],
        episodes_provider=h,
        episodes_degraded=h,
    )  # fmt: skip


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_no_hostile_string_is_outside_a_briefing_or_recall_fence(index: int) -> None:
    h = CORPUS[index]
    nonce = secrets.token_hex(16)
    briefing = compose_briefing(_briefing_inputs(h, h), max_chars=4000, nonce=nonce)
    recall = assemble_recall(
        facts=[fact_item(fact_id="f_1", text=h, scope="workspace", agent=h, run_id=h)],
        episodes=[
            episode_item(
                episode_id="ep_1", provider=h, text=h, run_id="run-1", agent=h, adapter=h,
                model=h, repo=REPO, branch=h, outcome="failed", started_at=1.0,
            )
        ],
        recent_runs=[
            recent_run_item(
                run_id="run-3", agent=h, adapter=h, outcome="failed", reason=h,
                ended_at=2.0, duration_ms=1000, branch=h, pull_request=h,
            )
        ],
        nonce=nonce, repo=REPO, provider=h, degraded=h,
    )  # fmt: skip
    for composed in (briefing, recall):
        split = wrapper_outside(composed.text)
        outside, inside = _payloads(split)
        assert not outside, composed.text
        assert PAYLOAD.search(h).group(0) in inside  # type: ignore[union-attr]
        parse(composed.text)  # and the document is still well formed
    prompt = fence_block(briefing.text, nonce=secrets.token_hex(16))
    split, before, after = block_outside(prompt, inner_wrapper=True)
    assert (before, after) == ("", "") and not _payloads(split)[0]


class Draws:
    def __call__(self) -> str:
        return str(secrets.randbelow(9 * 10**38) + 10**38)


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_no_hostile_string_is_outside_a_context_fence(index: int) -> None:
    h = CORPUS[index]
    segments = [
        SegmentInput("notebook", (PartInput(text=h),), title=f"Project notebook \u2014 {h}"),
        SegmentInput("workspace_context", (PartInput(text=h, label=h), PartInput(text=h))),
        SegmentInput("notes", (PartInput(text=h),)),
        SegmentInput("facts", (PartInput(entries=(h, "second")),)),
        SegmentInput("recent_runs", (PartInput(entries=(h,)),)),
    ]
    text = assemble(segments, get_tokenizer(), Draws()).text
    try:
        split = context_outside(text, TITLES)
    except Outside as exc:
        pytest.fail(f"{exc}\n{text}")
    outside, inside = _payloads(split)
    assert not outside
    assert PAYLOAD.search(h).group(0) in inside  # type: ignore[union-attr]


def test_the_ascii_fast_path_finds_exactly_what_the_general_reader_finds() -> None:
    rng = random.Random(secrets.randbits(64))
    alphabet = "<[/\\ |-_factepisodrunsleymFACTRUN\n\tx>=\"'0"
    wanted = fence_module._wanted(MARKER_NAMES)
    pattern = fence_module._ascii_markers(wanted)
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        fast = [m.start() for m in pattern.finditer(text)]
        general = [
            m.start()
            for m in fence_module._OPENER_RE.finditer(text)
            if fence_module._starts_marker(text, m.start(), wanted)
        ]
        assert fast == general, repr(text)
