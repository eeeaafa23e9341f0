"""The fixed catalog, file names, and what a body may hold (core/contextfiles.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetmem.core.context import BACKSTOP, SEGMENTS
from fleetmem.core.contextfiles import (
    AGENT_FILES,
    MAX_FILE_BYTES,
    NOTEBOOK,
    SCOPE_PROMPT,
    WORKSPACE_FILES,
    append_note,
    body_problem,
    check_body,
    normalize_body,
    parse_mode,
    resolve,
)
from fleetmem.errors import InvalidInput, NotFound

CORPUS = Path(__file__).resolve().parent / "corpus"


def test_six_workspace_files_with_the_seed_defaults() -> None:
    assert [s.title for s in WORKSPACE_FILES] == [
        "About you", "Organization", "People", "Glossary", "Voice", "Roster",
    ]  # fmt: skip
    every_run = [s.title for s in WORKSPACE_FILES if s.default_mode == "every_run"]
    assert every_run == ["About you", "Voice"]


def test_segment_budgets_are_exactly_fr47_and_under_the_backstop() -> None:
    budgets = {s.key: s.budget for s in SEGMENTS}
    assert budgets == {
        "notebook": 4000,  # takes the Skills slot: fleetmem has no skills
        "workspace_context": 1500,
        "identity": 1200,
        "role": 1200,
        "notes": 1500,
        "capabilities": 400,
        "operating_loop": 800,
        "tools": 1500,
        "skills": 4000,
        "facts": 1200,
        "scope_prompts": 600,
        "scope": 800,
        "recent_activity": 1200,
        "recent_runs": 800,
        "output_contract": 150,
    }
    assert {s.slug: s.budget for s in AGENT_FILES} == {
        k: budgets[k]
        for k in (
            "identity",
            "role",
            "notes",
            "capabilities",
            "operating_loop",
            "tools",
            "skills",
            "output_contract",
        )
    }
    assert NOTEBOOK.budget == budgets["notebook"]
    assert SCOPE_PROMPT.budget == budgets["scope_prompts"]
    # FR-48: the seed's segments (all but the notebook, which seed 004 adds) stay under the
    # backstop; with the notebook, a full notebook and full Skills can reach it.
    seed = sum(v for k, v in budgets.items() if k != "notebook")
    assert seed == 16_850 < BACKSTOP == 17_000 < sum(budgets.values()) == 20_850


def test_the_order_is_the_documented_one() -> None:
    assert [s.key for s in SEGMENTS] == [
        "notebook", "workspace_context", "identity", "role", "notes", "capabilities",
        "operating_loop", "tools", "skills", "facts", "scope_prompts", "scope",
        "recent_activity", "recent_runs", "output_contract",
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["about_you", "About you", "about-you", "ABOUT YOU"])
def test_names_resolve_by_slug_or_title(name: str) -> None:
    assert resolve("workspace", name).slug == "about_you"


def test_a_name_from_another_family_says_how_to_name_it() -> None:
    # A real file of another family is not found where it was looked for; the hint says where.
    with pytest.raises(NotFound, match="--agent"):
        resolve("workspace", "notes")
    with pytest.raises(InvalidInput, match="one of about_you"):
        resolve("workspace", "secrets")
    assert resolve("agent", "Operating loop").slug == "operating_loop"
    assert parse_mode("every-run") == "every_run"
    with pytest.raises(InvalidInput):
        parse_mode("always")


# ---- bodies: unicode tricks ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("pay \u202eevil\u202c now", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("a\u2066b\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("pass\u200bword", "U+200B ZERO WIDTH SPACE"),
        ("x\u2060y", "U+2060 WORD JOINER"),
        ("hidden \U000e0069\U000e0067\U000e006e tags", "U+E0069 TAG LATIN SMALL LETTER I"),
        ("nul \x00 byte", "U+0000"),
        ("escape \x1b[31m red", "U+001B"),
        ("next line \x85 here", "U+0085"),
        ("line\u2028separator", "U+2028 LINE SEPARATOR"),
        ("mid\ufeffbom", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
        ("filler \u3164 letter", "U+3164 HANGUL FILLER"),
        ("lone \ud83d surrogate", "U+D83D"),
    ],
)
def test_invisible_and_control_characters_are_refused_by_position(text: str, label: str) -> None:
    problem = body_problem(text)
    assert problem is not None and label in problem
    assert "line 1, column" in problem
    with pytest.raises(InvalidInput) as caught:
        check_body(text)
    assert caught.value.field == "text"
    assert text not in str(caught.value)  # the body is never echoed


def test_the_position_is_line_and_column() -> None:
    problem = body_problem("first\nsecond \u202e")
    assert problem is not None and "line 2, column 8" in problem


@pytest.mark.parametrize(
    "text",
    [
        "👩‍👩‍👧‍👦 family (zero width joiners)",
        "Scotland 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f flag",
        "keycap 1️⃣ and variation selector ☺️",
        "עברית with \u200f marks and فارسی\u200cها",
        "soft\u00adhyphen and tab\tseparated",
        "e\u0301 combining, 中文, ✅",
    ],
)
def test_legitimate_unicode_is_kept(text: str) -> None:
    assert body_problem(text) is None
    assert check_body(text) == text


def test_every_corpus_file_is_a_valid_body() -> None:
    for path in CORPUS.iterdir():
        text = path.read_text(encoding="utf-8")
        assert check_body(text) == text, path.name


def test_a_tag_outside_a_flag_sequence_is_refused() -> None:
    assert body_problem("🏴\U000e0067\U000e0062 unterminated") is not None
    assert body_problem("\U000e0067\U000e0062\U000e007f no black flag") is not None


def test_line_endings_and_a_leading_bom_are_normalized() -> None:
    assert normalize_body("\ufeffa\r\nb\rc\n") == "a\nb\nc\n"
    assert check_body("x\r\ny") == "x\ny"


def test_64_kb_is_the_limit_in_bytes() -> None:
    assert check_body("a" * MAX_FILE_BYTES) == "a" * MAX_FILE_BYTES
    with pytest.raises(InvalidInput, match="trim 1 bytes"):
        check_body("a" * (MAX_FILE_BYTES + 1))
    # 21,845 three-byte characters is 65,535 bytes; one more two-byte one crosses the line.
    assert check_body("中" * 21_845)
    with pytest.raises(InvalidInput, match="65,537 bytes"):
        check_body("中" * 21_845 + "é")


def test_append_keeps_the_old_body_as_an_exact_prefix() -> None:
    assert append_note("", "first") == "first\n"
    assert append_note("a", "b\n\n") == "a\nb\n"
    assert append_note("a\n", "b") == "a\nb\n"
