"""A learned second reading of a prompt the capture rules found no request in.

The rules of :mod:`fleetmem.core.capture` read 95 % or more of the requests of the writers
they were tuned on, but 79 % to 86 % of a new writer's (docs/facts.md): people ask to keep
things in more ways than a list of phrasings can hold ("I'd appreciate it if this stuck with
you beyond today: …", "Could you file this away for later? …"). This module gives that
long tail a second chance without loosening the rules.

A prompt is cut, sentence by sentence, into candidate pairs (*cue*, *fact*): before and
after a colon, a dash, the first "that"/"que"/"dass"/…, the first or last comma, or one
sentence and the sentences before or after it. A logistic model over hashed words, word
pairs and letter n-grams scores each cue: how much it reads like a request to keep what it
stands beside. It was trained (``scripts/train_capture_model.py``) on the corpora of
``tests/data/capture``, with each request's correct cut as a positive, its other cuts as
weak negatives, every cut of an ordinary prompt and every fact on its own as negatives.
:mod:`fleetmem.core.capture` keeps the best cue at or above :data:`THRESHOLD` only when the
rules' own vetoes pass (:func:`fleetmem.core.capture.learned_veto`: no "don't remember",
nothing about this task only, no question for a fact, no writing task, a keep word in the
cue, …).

Pure: the weights are a constant of :mod:`fleetmem.core.capture_weights`, decoded and
checked against the digest beside them on first use (about 4 ms); features are hashed with
CRC-32, which is the same on every platform and in every process.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import itertools
import math
import re
import struct
import unicodedata
import zlib
from array import array
from dataclasses import dataclass

#: Hashed feature space: 2**18 weights.
BITS = 18
#: A cue scoring at or above this is kept. Chosen on corpora a to z with held-out scores
#: (each corpus scored by a model trained without it): the lowest threshold at which no
#: corpus read over 1 % false (0.8 with 36 corpora; 0.85 once the model learned from 44, when
#: 0.8 read 1.06 % on one); confirmed on aa to ar (scripts/train_capture_model.py --loco).
THRESHOLD = 0.85
#: Sentences of a prompt cut into candidates: the first of the person's own (what they
#: pasted, quoted or fenced is left out before), where a request to keep something sits.
MAX_SENTENCES = 12
#: Words of one text that make features; a cue is short, and a fact is never scored.
MAX_WORDS = 120
#: Dashes of one sentence cut at, and cuts of one prompt: a soup of dashes and commas costs
#: no more than a prompt a person writes.
MAX_DASHES = 3
MAX_CUTS = 60
#: The weights' first bytes: a format tag, the bucket count, the bias and the weights' scale;
#: one signed byte per bucket follows (a weight is ``scale`` times it).
MAGIC = b"FMCAP2\0\0"
_HEADER = struct.Struct("<8sIdd")

_MASK = (1 << BITS) - 1
_WORD = re.compile(r"[^\W_]+|[^\w\s]")
_DASH = re.compile(r"\s(?:\u2014|\u2013|--?|->|\u2192)\s|\u2014")
_THAT = re.compile(r"\b(?:that|que|dass|che|dat|że|so)\b", re.IGNORECASE)
_COLON = re.compile(r":(?!//)(?!\d)")
#: Words before a "that" for it to be read as opening the fact.
MAX_THAT_OPENING = 25
#: Words a fact needs to be worth a cut.
MIN_FACT_WORDS = 3


class ModelError(ValueError):
    """The weights file is not one this version reads."""


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c))


def features(text: str) -> list[int]:
    """The hashed features of ``text``: its words, word pairs (with the start and end),
    the first four words by position, and letter 3- to 5-grams of words over three letters
    (for inflections, typos and languages the corpora hold little of)."""
    words = _WORD.findall(_normal(text))[:MAX_WORDS]
    found: set[str] = set()
    prev = "^"
    for at, word in enumerate(words):
        found.add("w" + word)
        found.add("b" + prev + " " + word)
        if at < 4:
            found.add(f"s{at}{word}")
        prev = word
        if len(word) > 3 and word.isalpha():
            padded = "<" + word + ">"
            for n in (3, 4, 5):
                for k in range(len(padded) - n + 1):
                    found.add("c" + padded[k : k + n])
    found.add("b" + prev + " $")
    # Sorted: the order of a set of strings changes with each process's hash seed, and the
    # sums of training would round differently.
    return sorted({zlib.crc32(f.encode()) & _MASK for f in found})


@dataclass(frozen=True)
class Cut:
    """One way to read a sentence as a request: ``cue`` asks to keep ``fact``."""

    kind: str
    cue: str
    fact: str


def _colon(sentence: str) -> int:
    """Where the first colon outside code, a URL and a time of day is, or -1."""
    for m in _COLON.finditer(sentence):
        if sentence[: m.start()].count("`") % 2 == 0:
            return m.start()
    return -1


def cuts(sentences: list[str]) -> list[Cut]:
    """Every candidate (cue, fact) pair of a prompt's sentences, in reading order."""
    said = [s.strip() for s in sentences][:MAX_SENTENCES]
    out: list[Cut] = []
    for at, sentence in enumerate(said):
        rest = " ".join(said[at + 1 :])
        colon = _colon(sentence)
        if colon > 0:
            out.append(Cut("colon", sentence[: colon + 1], sentence[colon + 1 :] + " " + rest))
        for m in itertools.islice(_DASH.finditer(sentence), MAX_DASHES):
            out.append(Cut("dash-before", sentence[: m.end()], sentence[m.end() :]))
            out.append(Cut("dash-after", sentence[m.start() :], sentence[: m.start()]))
        that = _THAT.search(sentence)
        if that and len(sentence[: that.start()].split()) <= MAX_THAT_OPENING:
            out.append(Cut("that", sentence[: that.end()], sentence[that.end() :]))
        comma = sentence.find(", ")
        if comma > 0:
            out.append(Cut("comma-before", sentence[: comma + 1], sentence[comma + 1 :]))
        comma = sentence.rfind(", ")
        if comma > 0:
            out.append(Cut("comma-after", sentence[comma:], sentence[:comma]))
        if len(said) > 1:
            if at > 0:
                out.append(Cut("sentence-after", sentence, " ".join(said[:at])))
            if at + 1 < len(said):
                out.append(Cut("sentence-before", sentence, rest))
    return [
        Cut(c.kind, c.cue.strip(), c.fact.strip())
        for c in out
        if c.cue.strip() and len(c.fact.split()) >= MIN_FACT_WORDS
    ][:MAX_CUTS]


@functools.lru_cache(maxsize=1)
def default_model() -> Model:
    """The model trained on the corpora of tests/data/capture, from
    :mod:`fleetmem.core.capture_weights` (generated by ``scripts/train_capture_model.py``),
    checked against the digest written beside it."""
    from fleetmem.core import capture_weights

    try:
        data = zlib.decompress(base64.b64decode("".join(capture_weights.DATA), validate=True))
    except (ValueError, zlib.error) as exc:  # binascii.Error is a ValueError
        raise ModelError(
            f"capture model: fleetmem/core/capture_weights.py does not decode ({exc}): "
            "it was changed by hand; reinstall fleetmem"
        ) from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != capture_weights.SHA256:
        raise ModelError(
            f"capture model: fleetmem/core/capture_weights.py decodes to sha256 {digest}, "
            f"not {capture_weights.SHA256}: it was changed by hand; reinstall fleetmem"
        )
    return Model(data)


def source(data: bytes, *, trained_on: str, corpora_sha256: str) -> str:
    """The Python module holding ``data`` (an :func:`encode` result), compressed."""
    packed = base64.b64encode(zlib.compress(data, 9)).decode()
    lines = [f'    "{packed[i : i + 88]}",' for i in range(0, len(packed), 88)]
    return (
        '"""The weights of fleetmem.core.capture_learned: generated by '
        "scripts/train_capture_model.py\n"
        f"from {trained_on}. Do not edit: train again.\n"
        '"""\n\n'
        f'SHA256 = "{hashlib.sha256(data).hexdigest()}"\n'
        "# The corpora files, read in name order, it was trained on:\n"
        f'CORPORA_SHA256 = "{corpora_sha256}"\n'
        "DATA = (\n" + "\n".join(lines) + "\n)\n"
    )


class Model:
    """The trained weights: ``score(text)`` is the probability that ``text`` is a cue."""

    def __init__(self, data: bytes) -> None:
        if len(data) < _HEADER.size:
            raise ModelError(f"capture model: {len(data)} bytes is shorter than its header")
        magic, buckets, bias, scale = _HEADER.unpack_from(data)
        if magic != MAGIC or buckets != 1 << BITS:
            raise ModelError(f"capture model: format {magic!r} with {buckets} buckets is not read")
        weights = array("b")
        weights.frombytes(data[_HEADER.size :])
        if len(weights) != buckets:
            raise ModelError(f"capture model: {len(weights)} weights, expected {buckets}")
        if not (math.isfinite(bias) and math.isfinite(scale) and scale > 0):
            raise ModelError(f"capture model: bias {bias} and scale {scale} are not usable")
        self._weights = weights
        self._bias = bias
        self._scale = scale

    def score(self, text: str) -> float:
        return self.score_features(features(text))

    def score_features(self, found: list[int]) -> float:
        w = self._weights
        z = self._bias + self._scale * sum(w[i] for i in found)
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def encode(weights: list[float], bias: float) -> bytes:
    """The bytes holding ``weights`` (one per bucket) and ``bias``, each weight quantized
    to a signed byte. On the 2,330 corpus prompts the rules find nothing in that have a cut
    no veto stops, the bytes and the floats they came from decide alike (the largest score
    difference, 0.19, fell away from the threshold)."""
    if len(weights) != 1 << BITS:
        raise ModelError(f"capture model: {len(weights)} weights, expected {1 << BITS}")
    # The scale is set by the 99.9th percentile of the weights, not the largest: a few
    # outliers clipped cost less than the resolution every small weight would lose.
    sizes = sorted(abs(x) for x in weights if x)
    top = sizes[int(len(sizes) * 0.999)] if sizes else 1.0
    scale = top / 127
    packed = array("b", (max(-127, min(127, round(x / scale))) for x in weights))
    return _HEADER.pack(MAGIC, 1 << BITS, bias, scale) + packed.tobytes()
