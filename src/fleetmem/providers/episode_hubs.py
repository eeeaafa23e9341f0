"""Hubs among the episodes a recall searches: how much of each candidate's cosine to take off
(or give back) for how close it sits to its neighbours.

A repository's routine runs are written alike (one agent's template, one build's log lines),
so the small sentence model puts them close to each other and to any question in their
vocabulary: such a *hub* scores high for questions it does not answer, while the run a
paraphrased question is after, often worded unlike the rest, is outranked. Facts search
corrects for this (:mod:`fleetmem.service.fact_hubs`); recall does the same before its score
fusion: each candidate's *neighbour similarity* is its mean cosine to its
:data:`~fleetmem.embed.neighbours.NEIGHBOURS` nearest episodes among an evenly spaced sample
of at most :data:`SAMPLE` of the searched scopes' episodes, and the fusion reads

    cosine - hub_weight * (neighbour similarity - the sample's own mean)

(``RankingOptions.hub_weight``). Whether a recall answers at all is still decided on the plain
cosines (the question-level floor), so the correction reorders and never makes an unrelated
store answer.

Costs, so recall stays within its latency budget:

- the sample is fetched once per set of scopes, on a background thread, and fetched again
  when the scopes' episode count has moved by more than a tenth or one of its episodes is
  gone (checked in the background at most every :data:`RECHECK_S` seconds); a sample
  holding an episode forgotten through this provider is dropped at once;
- only the :data:`CORRECTED` best candidates by plain cosine are corrected;
- up to :data:`WARM` episodes in the searched scopes, every episode's neighbour similarity is
  worked out on that thread before the sample is put to use, so a recall only looks its
  candidates up; up to :data:`TABLE_MAX`, the sample is put to use at once and every
  episode's is worked out after it on that thread, a page of stored vectors at a time (6 s
  for eight repositories holding 100,000 episodes on SQLite), and kept in a compact table
  (12 bytes an episode); until then, and for episodes stored since, past TABLE_MAX or in a
  set of scopes pushed out of the kept samples moments ago (:data:`CHURN_S`), a candidate's
  is worked out when first asked for (its stored vector read, one matrix product against
  the sample) and kept.

Chosen on the fusion laboratory's development halves and confirmed on its confirmation
halves (bench/fusion_lab.py, docs/benchmarks.md "episode hubs").
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fleetmem import process_memory
from fleetmem.embed.neighbours import NEIGHBOURS, nearest_mean, neighbour_similarity

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from fleetmem.store.base import Store, Vector

    Floats = npt.NDArray[np.float32]
else:
    from fleetmem.lazy_numpy import np

    Floats = object

log = logging.getLogger(__name__)

#: Most episodes of a set of scopes that neighbours are looked for among: exact up to this
#: many, an evenly spaced sample beyond (every candidate's similarity is then a little lower
#: alike, and only its difference from the sample's mean is used).
SAMPLE = 1024
#: Candidates corrected per recall: the best this many by plain cosine (chosen on the fusion
#: lab's dev halves: 30 keep the gain of correcting all ~80, 20 lose part of it).
CORRECTED = 30
#: How long the first recall of a set of scopes waits for their first sample (and, up to
#: WARM episodes, every offset): 0.11 s at 3,000 episodes, 0.28 s at 10,000 (SQLite, while
#: other work shared the machine). Once per set of scopes and process.
FIRST_WAIT_S = 0.5
#: Seconds between two checks of whether a set of scopes' episode count has moved.
RECHECK_S = 60.0
#: The count must move by more than this share (and more than :data:`MIN_CHANGE`) for the
#: sample to be fetched again.
GROWTH = 0.1
MIN_CHANGE = 16
#: Sets of scopes kept (a sample is at most SAMPLE x dim floats: 1.5 MiB at 384 dimensions).
MAX_SAMPLES = 16
#: A set of scopes past WARM episodes whose sample was pushed out by others less than this
#: many seconds ago gets no table when fetched again (its candidates' offsets are worked out
#: when asked for): with more sets in use than MAX_SAMPLES, tables made and pushed out in
#: turn would keep the background thread busy for nothing.
CHURN_S = 600.0
#: Pushed-out sets remembered for CHURN_S.
MAX_EVICTED = 256
#: Candidates' neighbour similarities worked out when first asked for and kept per sample,
#: before the oldest are dropped (those in the sample's table are not counted).
MAX_CACHED = 20_000
#: Up to this many episodes in a set of scopes, every one's offset is worked out with the
#: sample, on the background thread (0.28 s at 10,000, see FIRST_WAIT_S), before the first
#: recall uses the sample.
WARM = 10_000
#: Up to this many, every one's is worked out after the sample is in use, on the same thread
#: (6 s for eight repositories holding 100,000 on SQLite, 8 to 12 s on PostgreSQL): at
#: 100,000, working candidates' out when first asked for cost recall 2.6 to 2.8 ms at p95 on
#: SQLite and 10 ms on PostgreSQL (paired). Past it (at a million, each fetch of a sample
#: again would read every vector: a minute or more on PostgreSQL), only candidates' are,
#: when first asked for.
TABLE_MAX = 200_000
#: Stored vectors read at a time while the table is worked out (3 MiB at 384 dimensions).
PAGE = 2048
#: Pages worked through before the background thread takes its next task (about 0.3 s).
PAGES_A_TURN = 8


def to_correct(cosines: Mapping[str, float]) -> list[str]:
    """The candidates the correction applies to: the :data:`CORRECTED` best by plain cosine.
    Lower ones do not reach the top either way, and each one corrected may cost a stored
    vector's read (the fusion lab: the best 30 keep the whole gain, the best 20 lose some)."""
    return heapq.nlargest(CORRECTED, cosines, key=cosines.__getitem__)


def corrected(
    cosines: Mapping[str, float], offsets: Mapping[str, float], weight: float
) -> dict[str, float]:
    """``cosines`` less ``weight`` times each candidate's offset (none: unchanged)."""
    return {eid: c - weight * offsets.get(eid, 0.0) for eid, c in cosines.items()}


@dataclass(frozen=True, slots=True)
class _Table:
    """Offsets of many episodes in two arrays, sorted by each id's ``hash()``: 12 bytes an
    episode, where a dict of strings to floats takes about 150. Two ids of one process
    sharing a 64-bit hash would share an offset, which only shifts a score a little."""

    keys: npt.NDArray[np.int64]
    values: Floats

    @staticmethod
    def of(ids: Sequence[str], values: Floats) -> _Table:
        keys = np.fromiter((hash(i) for i in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(keys, kind="stable")
        return _Table(keys=keys[order], values=np.asarray(values, np.float32)[order])

    def look_up(self, ids: Sequence[str]) -> dict[str, float]:
        if not len(ids) or not len(self.keys):
            return {}
        wanted = np.fromiter((hash(i) for i in ids), dtype=np.int64, count=len(ids))
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        hit = self.keys[at] == wanted
        values = self.values[at].tolist()
        return {eid: values[n] for n, eid in enumerate(ids) if hit[n]}


def _advance(
    building: Generator[None, None, _Table | None], pages: int | None
) -> tuple[bool, _Table | None]:
    """Run a table's making for at most ``pages`` pages (None: to the end): whether it
    finished, and the table it made."""
    try:
        for _ in itertools.count() if pages is None else range(pages):
            next(building)
    except StopIteration as done:
        return True, done.value
    return False, None


@dataclass(slots=True)
class _Sample:
    count: int
    checked: float
    columns: dict[str, int]
    matrix: Floats | None
    mean: float
    #: Every episode's offset, worked out with the sample (none yet, or past TABLE_MAX).
    table: _Table | None = None
    #: Candidates' offsets worked out when first asked for.
    cached: OrderedDict[str, float] = field(default_factory=OrderedDict)


class EpisodeHubs:
    """Each candidate's neighbour similarity less its mean, per set of scopes and model.

    Counting a set of scopes' vectors and fetching its sample run on a background thread
    (at a million episodes on PostgreSQL a sample takes seconds). The first recall of a set
    of scopes waits for its first sample up to :data:`FIRST_WAIT_S`; past that, and while a
    sample is fetched again, recalls go on with what there is (none yet: not corrected).
    ``background=False`` does both in the calling thread (tests).
    """

    def __init__(
        self,
        store: Store,
        *,
        sample: int = SAMPLE,
        recheck_s: float = RECHECK_S,
        clock: Callable[[], float] = time.monotonic,
        background: bool = True,
    ) -> None:
        self._store = store
        self._size = sample
        self._recheck_s = recheck_s
        self._clock = clock
        self._lock = threading.Lock()
        self._samples: OrderedDict[tuple[str, tuple[str, ...]], _Sample] = OrderedDict()
        self._pending: dict[tuple[str, tuple[str, ...]], Future[None]] = {}
        self._tables: set[Future[None]] = set()
        #: When each set of scopes recently pushed out of ``_samples`` went (see CHURN_S).
        self._evicted: OrderedDict[tuple[str, tuple[str, ...]], float] = OrderedDict()
        self._pool: ThreadPoolExecutor | None = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="fleetmem-hubs")
            if background
            else None
        )

    def offsets(self, ids: Sequence[str], scopes: Sequence[str], model_id: str) -> dict[str, float]:
        """Neighbour similarity less the sample's mean, for each of ``ids`` with a stored
        vector (none when the scopes hold too few episodes to have neighbours, or their
        sample is still being fetched)."""
        if not ids or not scopes:
            return {}
        sample = self._sample(tuple(sorted(set(scopes))), model_id)
        if sample is None or sample.matrix is None:
            return {}
        wanted = list(dict.fromkeys(ids))
        table = sample.table
        found = table.look_up(wanted) if table is not None else {}
        with self._lock:
            rest = [i for i in wanted if i not in found]
            found.update((i, sample.cached[i]) for i in rest if i in sample.cached)
        missing = [i for i in rest if i not in found]
        if missing:
            try:
                self._compute(sample, missing, model_id)
            except Exception:  # the correction is optional: recall goes on without it
                # (for every candidate alike: half corrected would favour the other half)
                log.warning("recall: the correction for hubs was skipped", exc_info=True)
                return {}
            with self._lock:
                found.update((i, sample.cached[i]) for i in missing if i in sample.cached)
        return {i: found[i] for i in ids if i in found}

    def settle(self, timeout: float = 30.0) -> None:
        """Wait for the samples being fetched and their tables (benchmarks and tests that
        want every recall corrected)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                pending = [*self._pending.values(), *self._tables]
            if not pending:
                return
            for future in pending:  # a refresh may queue a table: look again after
                future.result(timeout=max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def _compute(self, sample: _Sample, ids: list[str], model_id: str) -> None:
        stored = self._store.builtin_vectors_for(ids, model_id)
        assert sample.matrix is not None
        dim = int(sample.matrix.shape[1])
        found = [i for i in ids if i in stored and np.asarray(stored[i]).shape == (dim,)]
        if found:
            self._keep(sample, found, np.stack([stored[i] for i in found]).astype(np.float32))

    def _keep(self, sample: _Sample, ids: Sequence[str], rows: Vector) -> None:
        """Work out and keep the offsets of ``ids``, whose stored vectors are ``rows``."""
        values = self._offsets_of(sample, ids, rows)
        if values is None:
            return
        with self._lock:
            for eid, value in zip(ids, values.tolist(), strict=True):
                sample.cached[eid] = value
            while len(sample.cached) > MAX_CACHED:
                sample.cached.popitem(last=False)

    @staticmethod
    def _offsets_of(sample: _Sample, ids: Sequence[str], rows: Vector) -> Floats | None:
        """The offsets of ``ids``, whose stored vectors are ``rows`` (None: not comparable
        with the sample)."""
        assert sample.matrix is not None
        if rows.ndim != 2 or rows.shape[1] != sample.matrix.shape[1] or len(ids) != len(rows):
            return None
        own = np.array([sample.columns.get(eid, -1) for eid in ids], dtype=np.int64)
        take = min(NEIGHBOURS, sample.matrix.shape[0] - 1)
        values = nearest_mean(rows, sample.matrix, own, take) - np.float32(sample.mean)
        # A vector that is not finite is nobody's hub: no correction either way.
        values[~np.isfinite(values)] = 0.0
        return values

    def _table(
        self, sample: _Sample, scopes: tuple[str, ...], model_id: str, ids: list[str], rows: Vector
    ) -> _Table | None:
        """Every episode's offset: from the sample's own rows when it holds every episode,
        otherwise read a page at a time. None past TABLE_MAX episodes, or if the rows cannot
        be compared with the sample."""
        if sample.matrix is None or sample.count > TABLE_MAX:
            return None
        if sample.count <= len(ids):
            values = self._offsets_of(sample, ids, rows)
            return _Table.of(ids, values) if values is not None else None
        return _advance(self._paged_table(sample, scopes, model_id), None)[1]

    def _paged_table(
        self, sample: _Sample, scopes: tuple[str, ...], model_id: str
    ) -> Generator[None, None, _Table | None]:
        """Every episode's offset, read a page at a time: yields after each page, so the
        background thread can take other work between pages; returns the table."""
        every: list[str] = []
        parts: list[Floats] = []
        after = 0
        while len(every) <= TABLE_MAX:
            page_ids, page, last = self._store.builtin_vectors_after(scopes, model_id, after, PAGE)
            if last == after:
                break
            after = last
            values = self._offsets_of(sample, page_ids, page) if page_ids else None
            if values is not None:
                every.extend(page_ids)
                parts.append(values)
            yield
        if not parts:
            return None
        return _Table.of(every, np.concatenate(parts))

    def _sample(self, scopes: tuple[str, ...], model_id: str) -> _Sample | None:
        """The sample of ``scopes`` as it stands, a check of it started when one is due."""
        key = (model_id, scopes)
        now = self._clock()
        with self._lock:
            current = self._samples.get(key)
            if current is not None:
                self._samples.move_to_end(key)
            due = current is None or now - current.checked >= self._recheck_s
            start = due and key not in self._pending
            if start and current is not None:
                current.checked = now  # one check per period, whatever it finds
            started: Future[None] | None = None
            if start and self._pool is not None:
                try:
                    started = self._pool.submit(self._refresh, key, current, now)
                except RuntimeError:  # closed: recall goes on uncorrected
                    start = False
                else:
                    self._pending[key] = started
        if start and self._pool is None:
            self._refresh(key, current, now)
        elif started is not None and current is None:
            # The first recall of these scopes waits a moment for their first sample: a
            # small store's is ready in milliseconds, so its answers do not depend on timing;
            # a large one's (seconds on PostgreSQL at a million episodes) is not waited for.
            with suppress(FutureTimeout):
                started.result(timeout=FIRST_WAIT_S)
        with self._lock:
            return self._samples.get(key)

    def _refresh(
        self, key: tuple[str, tuple[str, ...]], current: _Sample | None, now: float
    ) -> None:
        model_id, scopes = key
        try:
            count = self._store.builtin_vector_count(scopes, model_id)
            if (
                current is not None
                and abs(count - current.count) <= max(MIN_CHANGE, GROWTH * current.count)
                and self._all_live(current, model_id)
            ):
                return
            fresh, ids, rows = self._fetch(scopes, model_id, count, now)
            with self._lock:
                evicted = self._evicted.get(key)
            large_first = current is None and count > WARM
            # Pushed out by other sets of scopes a moment ago: more sets are in use than are
            # kept, and a table made now would likely be pushed out before it paid for its
            # seconds of work. Its candidates' offsets are worked out on use instead.
            churn = large_first and evicted is not None and now - evicted < CHURN_S
            later = large_first and not churn and self._pool is not None
            if not (churn or later):
                # Every episode's offset worked out before the sample is used, so no recall
                # has to (a sample fetched again replaces one that has its table already).
                fresh.table = self._table(fresh, scopes, model_id, ids, rows)
            del rows
            # This thread's heap held the rows and the products: hand the pages back.
            process_memory.give_back()
            self._publish(key, fresh)
            if later and fresh.matrix is not None and count <= TABLE_MAX:
                # A first sample of many episodes is used at once (recalls work their
                # candidates' offsets out meanwhile), and its table follows on this thread
                # as a task of its own, so the first recall's wait ends with the sample.
                self._later(key, fresh)
        except Exception as exc:  # the sample stays as it was; checked again next period
            # One line, not a trace: during a store outage this repeats every period.
            log.info("recall: the sample for the correction for hubs was not fetched: %s", exc)
        finally:
            with self._lock:
                self._pending.pop(key, None)

    def _later(self, key: tuple[str, tuple[str, ...]], sample: _Sample) -> None:
        """Make ``sample``'s table on the background thread, :data:`PAGES_A_TURN` pages a
        turn: between turns a sample that another set of scopes' first recall waits for
        is fetched first."""
        building = self._paged_table(sample, key[1], key[0])

        def turn() -> None:
            try:
                finished, table = _advance(building, PAGES_A_TURN)
            except Exception as exc:  # recalls go on working candidates' offsets out
                log.info("recall: the table for the correction for hubs was not made: %s", exc)
                return
            if not finished:
                self._queue(turn)
                return
            sample.table = table
            process_memory.give_back()

        self._queue(turn)

    def _queue(self, task: Callable[[], None]) -> None:
        assert self._pool is not None
        with suppress(RuntimeError):  # closed: recalls go on as they are
            future = self._pool.submit(task)
            with self._lock:
                self._tables.add(future)
            future.add_done_callback(self._table_done)

    def _table_done(self, future: Future[None]) -> None:
        with self._lock:
            self._tables.discard(future)

    def _publish(self, key: tuple[str, tuple[str, ...]], sample: _Sample) -> None:
        with self._lock:
            self._samples[key] = sample
            self._samples.move_to_end(key)
            while len(self._samples) > MAX_SAMPLES:
                gone, _ = self._samples.popitem(last=False)
                self._evicted[gone] = self._clock()
                self._evicted.move_to_end(gone)
                while len(self._evicted) > MAX_EVICTED:
                    self._evicted.popitem(last=False)

    def _all_live(self, sample: _Sample, model_id: str) -> bool:
        """Whether every episode of ``sample`` still has its vector: one forgotten through
        another daemon leaves the sample at the next check, not only at the next tenth."""
        ids = list(sample.columns)
        found = 0
        for at in range(0, len(ids), 500):
            found += len(self._store.builtin_vectors_for(ids[at : at + 500], model_id))
        return found == len(ids)

    def forget(self, episode_id: str) -> None:
        """Drop every sample holding ``episode_id`` (fetched again at the next recall)."""
        with self._lock:
            for key in [k for k, v in self._samples.items() if episode_id in v.columns]:
                del self._samples[key]
            for sample in self._samples.values():
                sample.cached.pop(episode_id, None)

    def _fetch(
        self, scopes: tuple[str, ...], model_id: str, count: int, now: float
    ) -> tuple[_Sample, list[str], Vector]:
        """The new sample, and the ids and rows it was made of."""
        ids, raw = self._store.builtin_vector_sample(scopes, model_id, self._size)
        if len(ids) <= NEIGHBOURS or raw.ndim != 2:
            # Too few episodes to speak of neighbours: no correction.
            empty = _Sample(count=count, checked=now, columns={}, matrix=None, mean=0.0)
            return empty, ids, raw
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        own = neighbour_similarity(matrix)
        mean = float(own.mean()) if np.isfinite(own).all() else 0.0
        sample = _Sample(
            count=count,
            checked=now,
            columns={eid: n for n, eid in enumerate(ids)},
            matrix=matrix,
            mean=mean,
        )
        return sample, ids, raw
