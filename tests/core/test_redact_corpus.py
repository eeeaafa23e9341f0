"""The redactor against generated secrets and against real clean text.

Catch rate: every format of :mod:`tests.core.secret_corpus` gives 20 samples with fresh random
values (a new draw on every run, never a fixed seed). For each sample index, at least 98 % of
the formats must be caught, which means every secret value of the sample is gone from the
redacted text; any miss is printed with its text so it can be turned into a rule or a test.

False positives: at least 50,000 lines of the installed packages' Python sources and
documents (:mod:`tests.core.clean_corpus`); at most 0.1 % of them may change.
"""

from __future__ import annotations

import pytest

from fleetmem.core.redact import REDACTED, find_secrets, redact, strip_invisible
from tests.core import clean_corpus, secret_corpus

SAMPLES = 20
MIN_CATCH = 0.98
MIN_FORMATS = 100
FP_SOURCE_LINES = 40_000
FP_DOC_LINES = 12_000
MAX_FP_RATE = 0.001


def _caught(text: str, values: list[str]) -> bool:
    out = redact(text)
    return not any(value in out or value in strip_invisible(out) for value in values)


def test_corpus_is_broad() -> None:
    formats = secret_corpus.formats()
    assert len({f.name for f in formats}) == len(formats) >= MIN_FORMATS
    assert len(secret_corpus.families()) >= 9


def test_every_sample_has_its_values_in_the_text() -> None:
    # A sample whose secret is not in its own text would be "caught" for free.
    for fmt in secret_corpus.formats():
        text, values = fmt.make()
        assert values, fmt.name
        assert all(v and v in strip_invisible(text) for v in values), fmt.name


def test_catch_rate_per_sample() -> None:
    formats = secret_corpus.formats()
    misses: dict[int, list[tuple[str, str]]] = {i: [] for i in range(SAMPLES)}
    for fmt in formats:
        for index in range(SAMPLES):
            text, values = fmt.make()
            if not _caught(text, values):
                misses[index].append((fmt.name, text))
    report = {i: [name for name, _ in missed] for i, missed in misses.items() if missed}
    for index, missed in misses.items():
        rate = 1 - len(missed) / len(formats)
        assert rate >= MIN_CATCH, (index, rate, missed[:5], report)


def test_redacted_samples_name_a_rule_and_say_redacted() -> None:
    for fmt in secret_corpus.formats():
        text, _ = fmt.make()
        assert REDACTED in redact(text), fmt.name
        names = find_secrets(text)
        assert names, fmt.name


def test_redacting_a_sample_twice_changes_nothing() -> None:
    for fmt in secret_corpus.formats():
        text, _ = fmt.make()
        once = redact(text)
        assert redact(once) == once, fmt.name


@pytest.fixture(scope="module")
def clean_files() -> list[clean_corpus.CleanFile]:
    files = clean_corpus.source_files(FP_SOURCE_LINES) + clean_corpus.doc_files(FP_DOC_LINES)
    if sum(f.text.count("\n") + 1 for f in files) < 50_000:
        pytest.fail("fewer than 50,000 lines of installed sources and docs to test against")
    return files


def test_false_positive_rate_on_installed_sources_and_docs(
    clean_files: list[clean_corpus.CleanFile],
) -> None:
    total = 0
    changed: list[str] = []
    for clean in clean_files:
        before = strip_invisible(clean.text)
        lines = before.splitlines()
        total += len(lines)
        for index in clean_corpus.changed_lines(before, redact(clean.text)):
            changed.append(f"{clean.name}:{index + 1}: {lines[index][:120]}")
    assert total >= 50_000
    assert len(changed) <= MAX_FP_RATE * total, (len(changed), total, changed[:40])
