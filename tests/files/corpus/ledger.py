"""Settlement ledger: idempotent postings keyed by (account, period)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from decimal import ROUND_HALF_EVEN, Decimal


@dataclasses.dataclass(frozen=True, slots=True)
class Posting:
    account: str
    period: str  # "2026-11"
    amount: Decimal

    def rounded(self) -> Decimal:
        return self.amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)


def settle(postings: Iterable[Posting]) -> dict[tuple[str, str], Decimal]:
    totals: dict[tuple[str, str], Decimal] = {}
    for p in postings:
        key = (p.account, p.period)
        totals[key] = totals.get(key, Decimal(0)) + p.rounded()
    if any(v < 0 for v in totals.values()):
        raise ValueError(f"negative balance: {sorted(k for k, v in totals.items() if v < 0)!r}")
    return totals


if __name__ == "__main__":  # pragma: no cover
    print(settle([Posting("acme", "2026-11", Decimal("12.345"))]))
