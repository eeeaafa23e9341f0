"""The facts block's 1,200-token cap is counted with the exact o200k_base tokenizer, the one
the context assembly and the load meter use, not with the rough core estimate."""

from __future__ import annotations

from fleetmem.core.facts import (
    BLOCK_HEADER,
    BLOCK_TOKEN_CAP,
    BlockItem,
    dropped_line,
    estimate_tokens,
    fit_block,
)
from fleetmem.service.facts import FactService
from fleetmem.tokenize import get_tokenizer
from tests.facts.conftest import ALICE, API, Clock

# Digits and dotted addresses cost about twice as many real tokens as the 4-characters-per-token
# estimate says, so a cap counted by the estimate would let far too many such facts through.
NUMBERS = "Ports {n}81, 9443, 7001, 6553 and 5432 stay closed on hosts 10.2.{n}.4 and 10.9.8.7. "


def _body(n: int) -> str:
    return (f"F{n}. " + NUMBERS.format(n=n) * 6)[:480].strip()


def _rendered(items: list[BlockItem], dropped: int) -> str:
    lines = [BLOCK_HEADER, *(item.line() for item in items)]
    if dropped:
        lines.append(dropped_line(dropped))
    return "\n".join(lines)


def test_a_block_near_the_cap_is_cut_exactly_where_the_exact_count_says(
    facts: FactService, clock: Clock
) -> None:
    for n in range(8):
        clock.advance(1.0)
        facts.add(_body(n), actor=ALICE)
    b = facts.facts_block(run_id="run-exact", agent="api-fixer", repo=API)
    assert b is not None and b.status == "ok"
    tokenizer = get_tokenizer()
    assert b.tokens == tokenizer.count(b.text) <= BLOCK_TOKEN_CAP
    assert 0 < len(b.items) < 8 and b.dropped == 8 - len(b.items)
    # One more fact (the best of those dropped) would overflow the cap by the exact count.
    rows = facts.select_for_run(agent="api-fixer", repo=API)
    kept = list(b.items)
    assert [i.fact_id for i in kept] == [r.fact_id for r in rows[: len(kept)]]
    one_more = _rendered([*kept, rows[len(kept)]], b.dropped - 1)
    assert tokenizer.count(one_more) > BLOCK_TOKEN_CAP
    # The estimate would have admitted more of them: the cut really is the exact one.
    assert estimate_tokens(one_more) <= BLOCK_TOKEN_CAP


def test_fit_block_counts_with_the_counter_it_is_given() -> None:
    # Pure: fit_block takes the counter; the default is the estimate for callers without one.
    items = [BlockItem(f"f_{n}", 1, "note", "workspace", _body(n), False, 1.0, 0.5) for n in (1, 2)]
    exact = fit_block((), items, cap=300, count_tokens=get_tokenizer().count)
    rough = fit_block((), items, cap=300)
    assert len(exact.items) < len(rough.items)
    assert exact.tokens == get_tokenizer().count(exact.text)
    assert rough.tokens == estimate_tokens(rough.text)


def test_a_blocks_pinned_and_recalled_facts_are_counted_from_its_lines() -> None:
    """The whole-agent report's "N pinned + M recalled" is read back from the block's own
    lines, so it counts what the agent is given; a body may hold parentheses and ';'."""
    from fleetmem.core.facts import BlockItem, pinned_and_recalled

    def item(n: int, pinned: bool, body: str, scope: str = "workspace") -> BlockItem:
        return BlockItem(f"f_{n:04d}", 1, "rule", scope, body, pinned, 1.0, 0.9)

    lines = [
        "Remembered facts (reference data: ...):",
        item(1, True, "Deploys (all of them) wait for CI; no exceptions.").line(),
        item(2, False, "Invoices go out monthly.", "project:github.com/acme/api").line(),
        item(3, False, "Ask (politely) before paging (pinned ops).").line(),
        "No other remembered fact matched this run.",
    ]
    assert pinned_and_recalled("\n".join(lines)) == (1, 2)
    assert pinned_and_recalled("No remembered fact matched this run.") == (0, 0)
