"""A held-out recall set of coding-agent runs, for measuring the ranking, never for tuning it.

What it is: 10 repositories' runs (incidents, other agents' earlier attempts, reviews and
routine work) in two halves, A (seed 4242, 327 runs) and B (seed 777, 323 runs), each with
92 questions whose answer is one run (40 asked in the run's own words, 40 paraphrased so that
they share no content word with the run, 12 naming the agent) and 10 unrelated questions.
:func:`bench.heldout_runs.data.build` makes a half as a :class:`bench.recall_sets.RunsSet`;
``python -m bench.bench_recall_heldout`` measures recall on it.

Who wrote it and when: written on 2026-12-07 by a helper session of the project, from a brief,
apart from ``bench/recall_sets.py`` (with ``bench/recall_lexicon.py``) and ``bench/common.py``:
its own incidents (:mod:`.incidents`), vocabulary (:mod:`.vocab`), stop list and stemmer
(:mod:`.data`). It was never used to tune the ranking: the defaults were chosen on
``bench/recall_sets.py``'s dev half before this set existed. Keep it that way: a change chosen
by looking at these figures would make them a development set.
"""
