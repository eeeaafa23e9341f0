"""Real text with no secrets in it, for the redactor's false-positive rate.

The lines come from the Python packages installed next to fleetmem: their ``.py`` sources
and their ``.md``/``.rst``/``.txt`` documents, read from every ``site-packages`` directory on
``sys.path``. Files are ordered by a hash of their path relative to ``site-packages`` (so the
choice is deterministic yet spread over many packages, not the first few alphabetically) and
read whole until the requested number of lines is reached. fleetmem's own files and the test
suites of secret scanners (whose fixtures are secrets on purpose) are left out.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

_SOURCE_SUFFIXES = (".py",)
_DOC_SUFFIXES = (".md", ".rst", ".txt")
# A file past this size is mostly data (generated tables, vendored word lists), not prose.
_MAX_FILE_BYTES = 400_000
_MAX_LINES_PER_FILE = 1_500
_EXCLUDED_PARTS = frozenset({"fleetmem", "detect_secrets", "trufflehog", "gitleaks"})


@dataclass(frozen=True)
class CleanFile:
    """One file of the corpus: its path relative to site-packages and its text."""

    name: str
    text: str


def site_packages() -> list[Path]:
    """Every existing site-packages directory on sys.path, in sys.path order."""
    seen: list[Path] = []
    for entry in sys.path:
        path = Path(entry)
        if path.name == "site-packages" and path.is_dir() and path not in seen:
            seen.append(path)
    return seen


def _candidates(suffixes: tuple[str, ...]) -> list[tuple[str, Path]]:
    found: dict[str, Path] = {}
    for root in site_packages():
        for path in root.rglob("*"):
            if path.suffix not in suffixes or not path.is_file():
                continue
            name = path.relative_to(root).as_posix()
            if _EXCLUDED_PARTS.intersection(name.split("/")[0].split("-")[:1]):
                continue
            found.setdefault(name, path)
    return sorted(found.items(), key=lambda item: hashlib.sha256(item[0].encode()).hexdigest())


def load(lines: int, suffixes: tuple[str, ...]) -> list[CleanFile]:
    """Files with the given suffixes, in hash order, until ``lines`` lines are collected."""
    files: list[CleanFile] = []
    total = 0
    for name, path in _candidates(suffixes):
        if total >= lines:
            break
        try:
            if path.stat().st_size > _MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        kept = text.splitlines()[:_MAX_LINES_PER_FILE]
        if not kept:
            continue
        files.append(CleanFile(name, "\n".join(kept)))
        total += len(kept)
    return files


def source_files(lines: int) -> list[CleanFile]:
    """Python sources of the installed packages, about ``lines`` lines."""
    return load(lines, _SOURCE_SUFFIXES)


def doc_files(lines: int) -> list[CleanFile]:
    """Markdown, reStructuredText and plain-text documents, about ``lines`` lines."""
    return load(lines, _DOC_SUFFIXES)


def changed_lines(before: str, after: str) -> list[int]:
    """Indexes of the lines of ``before`` that are not unchanged in ``after``."""
    old = before.splitlines()
    new = after.splitlines()
    if len(old) == len(new):
        return [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    import difflib

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    kept: set[int] = set()
    for block in matcher.get_matching_blocks():
        kept.update(range(block.a, block.a + block.size))
    return [i for i in range(len(old)) if i not in kept]
