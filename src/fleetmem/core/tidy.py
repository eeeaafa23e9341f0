"""Tidy up: which facts say nearly the same, by their words (pure).

Used when no embedder answers: two facts are near duplicates when the Jaccard similarity of
their content words reaches a threshold (:data:`fleetmem.core.facts.NEAR_DUPLICATE_WORDS`, the
same rule the facts service applies to a new fact). Comparing every pair of 2,000 facts is
two million set operations; a prefix filter (Chaudhuri et al., "A primitive operator for
similarity joins", 2006; Bayardo et al., "Scaling up all pairs similarity search", 2007)
compares only facts that share one of their rarest words, and finds exactly the same pairs.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from fleetmem.core.textquery import terms


def word_pairs(texts: Sequence[str], threshold: float) -> list[tuple[int, int, float]]:
    """Every pair ``(i, j, similarity)`` with ``i < j`` whose content-word Jaccard similarity
    is at least ``threshold`` (0 < threshold <= 1), in index order. Texts without a content
    word pair with nothing."""
    if not 0 < threshold <= 1:
        raise ValueError("threshold must be in (0, 1]")
    sets = [frozenset(terms(text)) for text in texts]
    frequency = Counter(word for words in sets for word in words)
    index: dict[str, list[int]] = defaultdict(list)
    found: list[tuple[int, int, float]] = []
    for j, words in enumerate(sets):
        if not words:
            continue
        ordered = sorted(words, key=lambda w: (frequency[w], w))
        # A pair at the threshold shares at least ceil(t * |x|) words of x, so it shares one
        # of the first |x| - ceil(t * |x|) + 1 (a smaller ceil only makes the prefix longer).
        need = math.ceil(threshold * len(ordered) - 1e-9)
        prefix = ordered[: max(1, len(ordered) - need + 1)]
        seen: set[int] = set()
        for word in prefix:
            for i in index[word]:
                if i in seen:
                    continue
                seen.add(i)
                other = sets[i]
                similarity = len(words & other) / len(words | other)
                if similarity >= threshold:
                    found.append((i, j, similarity))
            index[word].append(j)
    found.sort(key=lambda pair: (pair[0], pair[1]))
    return found
