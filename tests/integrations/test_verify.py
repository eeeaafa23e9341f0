"""Which commands are verifications, and of which class."""

from __future__ import annotations

import pytest

from fleetmem.config import VerifyPattern
from fleetmem.integrations.verify import BUILD, LINT, TEST, TYPE, classify


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -q", TEST),
        ("python -m pytest tests/test_app.py", TEST),
        ("python3.11 -m unittest discover", TEST),
        ("uv run pytest -x", TEST),
        ("cd api && npm test", TEST),
        ("bash -lc 'cd api && pytest -q'", TEST),
        ('sh -c "make test 2>&1 | tail -20"', TEST),
        ("FOO=1 timeout 60 go test ./...", TEST),
        ("cargo test --workspace", TEST),
        ("./gradlew test", TEST),
        ("pnpm run test:unit", TEST),
        ("npx vitest run", TEST),
        ("make", BUILD),
        ("make -j8 all", BUILD),
        ("cargo build --release", BUILD),
        ("npm run build", BUILD),
        ("cmake --build build", BUILD),
        ("ruff check src tests", LINT),
        (".venv/bin/ruff format --check src", LINT),
        ("black --check .", LINT),
        ("cargo clippy -- -D warnings", LINT),
        ("go vet ./...", LINT),
        ("yarn lint", LINT),
        ("mypy src", TYPE),
        ("npx tsc --noEmit", TYPE),
        ("cargo check", TYPE),
        ("npm run typecheck", TYPE),
    ],
)
def test_verifications_are_classified(command: str, expected: str) -> None:
    assert classify(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "git status",
        "cat tests/test_app.py",
        "grep -rn pytest .",
        "echo pytest > notes.txt",
        "ruff format src",
        "black .",
        "make clean",
        "npm install",
        "pip install pytest",
        "python script.py",
        "",
        "   ",
    ],
)
def test_other_commands_are_not_verifications(command: str) -> None:
    assert classify(command) is None


def test_configured_patterns_come_first() -> None:
    patterns = [VerifyPattern(match=r"^\./ci/check\b", error_class="ci_failure")]
    assert classify("./ci/check --fast", patterns) == "ci_failure"
    assert classify("pytest", patterns) == TEST
    assert classify("./ci/other", patterns) is None


def test_unbalanced_quotes_do_not_break_classification() -> None:
    assert classify("pytest -k 'unterminated") == TEST
