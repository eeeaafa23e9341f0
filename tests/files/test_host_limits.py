"""A context fitted to what its host takes at the start (issue 18 part 2; core/hosts.py).

The texts are drawn fresh for each test from three alphabets (ASCII words, two-byte Latin,
astral emoji that JavaScript counts as two units), so the limits are checked on text the
module was not written against.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from fleetmem.core.context import HOST_CUT_MARKER, HOST_PULL_ORDER, SEGMENTS
from fleetmem.core.contextfiles import AGENT_FILES
from fleetmem.core.hosts import CLAUDE_CODE_SESSION, CODEX_SESSION, CONTEXT_URI, utf16_units, within
from fleetmem.service.files import ContextFileService
from tests.files.conftest import MARINA
from tests.files.test_context import REPO, bodies_in

AGENT = "host-agent"
ALPHABETS = {
    "ascii": "abcdefghijklmnopqrstuvwxyz",
    "latin": "áéíóúñçøåß",
    "astral": "😀🚀🧪🦀🐍",
}
NONCE = re.compile(r'id="\d{39}"')


def words(rng: random.Random, alphabet: str, lines: int, first: str, last: str) -> str:
    body = [
        " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(2, 9))) for _ in range(8))
        for _ in range(lines)
    ]
    return "\n".join([first, *body, last]) + "\n"


def fill(files: ContextFileService, name: str, text: str, **where: str) -> None:
    ref = files.ref(name, **where)
    files.save(ref, text, base_revision=files.get(ref).revision, actor=MARINA)


def feeds(rng: random.Random) -> dict[str, object]:
    lines = [
        f"run r{rng.randrange(10**6):06d} succeeded, {rng.randint(1, 9)} files" for _ in range(60)
    ]
    return {
        k: (lambda _r, _l=lines: list(_l))
        for k in ("facts", "scope", "recent_activity", "recent_runs")
    }


@pytest.mark.parametrize("alphabet", sorted(ALPHABETS))
def test_a_long_context_fits_the_limit_leaving_whole_parts_out_in_order(
    files: ContextFileService, alphabet: str
) -> None:
    rng = random.Random()
    fill(files, "notebook", words(rng, ALPHABETS[alphabet], 120, "NB-FIRST", "NB-LAST"), repo=REPO)
    for spec in AGENT_FILES:
        fill(
            files,
            spec.slug,
            words(rng, ALPHABETS[alphabet], 12, f"{spec.slug}-top", "end"),
            agent=AGENT,
        )
    providers = feeds(rng)
    whole = files.assemble(AGENT, repo=REPO, providers=providers)  # type: ignore[arg-type]
    limit = rng.randint(4_000, 9_000)
    fitted = files.assemble(
        AGENT,
        repo=REPO,
        providers=providers,
        host=within(CLAUDE_CODE_SESSION, limit),  # type: ignore[arg-type]
    )
    assembly = fitted.assembly
    assert utf16_units(whole.assembly.text) > limit
    assert utf16_units(assembly.text) <= limit and assembly.fits_host
    # Left out in the pull order, never the facts; the last one left out may give its head.
    withheld = [s.key for s in assembly.segments if s.withheld_tokens]
    present = [s.key for s in whole.assembly.segments if s.present]
    order = [k for k in HOST_PULL_ORDER if k in present]
    assert withheld == [k for k in (s.key for s in SEGMENTS) if k in order[: len(withheld)]]
    assert "facts" not in withheld and assembly.segment("facts").present
    cut = [s for s in assembly.segments if s.withheld_tokens and not s.pulled]
    assert len(cut) <= 1
    # The text ends with the note naming what is left out, the tokens and the resource.
    note = assembly.text[assembly.text.rindex("## Not included above") :]
    assert (
        CONTEXT_URI in note
        and f"({sum(s.withheld_tokens for s in assembly.pulled):,} tokens)" in note
    )
    for segment in assembly.pulled:
        assert segment.title in note
    # Everything given is as the budgets made it, the meter exact to the token.
    bodies_in(assembly)
    # The kept whole text is the context without a host, word for word.
    assert NONCE.sub("N", assembly.full_text) == NONCE.sub("N", whole.assembly.text)
    for segment in cut:
        assert HOST_CUT_MARKER in assembly.text
        head = "".join(p.report.delivered for p in segment.parts)
        assert head.startswith(
            whole.assembly.segment(segment.key).parts[0].report.delivered.splitlines()[0]
        )


def test_a_context_within_the_limit_is_given_whole(files: ContextFileService) -> None:
    rng = random.Random()
    fill(files, "notes", words(rng, ALPHABETS["ascii"], 10, "N-FIRST", "N-LAST"), agent=AGENT)
    whole = files.assemble(AGENT, repo=REPO, providers={})
    size = utf16_units(whole.assembly.text)
    fitted = files.assemble(AGENT, repo=REPO, providers={}, host=within(CLAUDE_CODE_SESSION, size))
    assert not fitted.assembly.pulled and "Not included above" not in fitted.assembly.text
    assert NONCE.sub("N", fitted.assembly.text) == NONCE.sub("N", whole.assembly.text)
    one_less = files.assemble(
        AGENT, repo=REPO, providers={}, host=within(CLAUDE_CODE_SESSION, size - 1)
    )
    # Notes is the only part: its head is given, cut on a line, and the rest is named.
    [cut] = one_less.assembly.pulled
    assert cut.key == "notes" and not cut.pulled
    assert utf16_units(one_less.assembly.text) <= size - 1
    assert "N-FIRST" in one_less.assembly.text and "the rest of Notes" in one_less.assembly.text


def test_a_limit_no_text_can_meet_is_reported_not_hidden(files: ContextFileService) -> None:
    rng = random.Random()
    fill(files, "notes", words(rng, ALPHABETS["latin"], 30, "A", "B"), agent=AGENT)
    fitted = files.assemble(AGENT, repo=REPO, providers={}, host=within(CLAUDE_CODE_SESSION, 50))
    assert not fitted.assembly.fits_host
    assert utf16_units(fitted.assembly.text) > 50


def test_javascript_counts_astral_characters_twice() -> None:
    assert utf16_units("abc") == 3
    assert utf16_units("é") == 1
    assert utf16_units("😀") == 2
    assert utf16_units("a😀é🚀") == 6
    assert CLAUDE_CODE_SESSION.size("😀" * 5_000) == 10_000


@pytest.mark.parametrize("adapter", ["claude-code", "codex"])
def test_an_argument_over_the_exec_limit_loses_parts_not_the_whole_context(
    files: ContextFileService, adapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fleetmem run`` gives the context as one argument: fitted to the per-argument limit
    (lowered here: the system's 128 KiB is more than a 17,000-token context usually takes)."""
    from fleetmem.integrations import briefing, context_delivery

    rng = random.Random()
    fill(files, "notebook", words(rng, ALPHABETS["latin"], 150, "NB-FIRST", "NB-LAST"), repo=REPO)
    fill(files, "notes", words(rng, ALPHABETS["ascii"], 8, "N-FIRST", "N-LAST"), agent=AGENT)
    limit = rng.randint(3_000, 6_000)
    for module in (briefing, context_delivery):  # the check of a real argv, and the note
        monkeypatch.setattr(module, "per_argument_limit", lambda: limit)
    argv = [adapter, "-p", "--", "go"]
    host = context_delivery.argv_host(adapter, argv, {}, has_prompt=True)
    assert (
        host is not None
        and context_delivery.argv_host("command", argv, {}, has_prompt=True) is None
    )
    fitted = files.assemble(AGENT, repo=REPO, providers={}, host=host).assembly
    [option] = context_delivery.context_options(adapter, fitted.text)[-1:]  # type: ignore[index]
    assert len(option.encode("utf-8")) + 1 <= limit
    assert "N-LAST" in fitted.text and fitted.pulled[0].key == "notebook"
    assert "NB-LAST" in fitted.full_text and "NB-LAST" not in fitted.text


def test_the_report_says_per_host_what_is_given_and_what_must_be_pulled(
    files: ContextFileService,
) -> None:
    from fleetmem.surfaces.cli.files_cmds import report_text
    from fleetmem.surfaces.files_views import report_view
    from fleetmem.surfaces.http.schemas_files import ContextReport

    rng = random.Random()
    vocabulary = ["ledger", "fixture", "deploy", "billing", "cache", "queue", "retry", "shard"]
    notebook = [" ".join(rng.choices(vocabulary, k=10)) for _ in range(250)]
    fill(files, "notebook", "\n".join(["NB-FIRST", *notebook, "NB-LAST"]), repo=REPO)
    fill(files, "notes", words(rng, ALPHABETS["ascii"], 8, 'N-"FIRST"', "N-LAST"), agent=AGENT)
    report = files.report(AGENT, repo=REPO, providers={})
    by_host = {reach.profile.key: reach for reach in report.hosts}
    assert set(by_host) == {
        "claude-code-session",
        "codex-session",
        "claude-code",
        "codex",
        "command",
    }
    session = by_host["claude-code-session"]
    # The same fit a session is given (the report computes it once, from the same bodies).
    given = files.assemble(AGENT, repo=REPO, providers={}, host=within(CLAUDE_CODE_SESSION))
    assert [s.key for s in session.withheld] == [s.key for s in given.assembly.pulled]
    assert session.withheld and session.size is not None and session.size <= 10_000
    assert session.delivered_tokens == given.assembly.total
    # Codex counts UTF-8 bytes where Claude Code counts UTF-16 units: its own fit and size.
    codex = by_host["codex-session"]
    given = files.assemble(AGENT, repo=REPO, providers={}, host=within(CODEX_SESSION))
    assert [s.key for s in codex.withheld] == [s.key for s in given.assembly.pulled]
    assert codex.size == len(given.assembly.text.encode("utf-8")) <= 10_000
    whole = report.context.assembly.total
    assert by_host["command"].delivered_tokens == whole and not by_host["command"].withheld
    # The same text as one argument: Codex's is TOML, its quotes and newlines escaped.
    assert by_host["codex"].size > by_host["claude-code"].size > 10_000  # type: ignore[operator]
    view = report_view(report)
    ContextReport.model_validate(view)  # the documented schema of the API's answer
    [session_view] = [h for h in view["hosts"] if h["host"] == "claude-code-session"]
    assert session_view["withheld_tokens"] == sum(p["tokens"] for p in session_view["withheld"])
    text = report_text(view)
    assert "per host" in text and "tokens to pull: Project notebook" in text


def test_a_kept_context_is_the_runs_alone_and_old_ones_are_pruned(tmp_path: Path) -> None:
    import os
    import stat
    import time

    from fleetmem.integrations.context_delivery import (
        KEPT_MAX_AGE_S,
        forget_whole,
        keep_whole,
        kept_whole,
    )

    keep_whole(tmp_path, "run-old", "old text")
    [old] = list((tmp_path / "run" / "context").iterdir())
    stale = time.time() - KEPT_MAX_AGE_S - 60
    os.utime(old, (stale, stale))
    keep_whole(tmp_path, "run-new", "new text")
    assert kept_whole(tmp_path, "run-old") is None  # a run that never said it ended
    assert kept_whole(tmp_path, "run-new") == "new text"
    assert kept_whole(tmp_path, "run-other") is None
    [new] = list((tmp_path / "run" / "context").iterdir())
    assert stat.S_IMODE(new.stat().st_mode) == 0o600
    assert stat.S_IMODE(new.parent.stat().st_mode) == 0o700
    forget_whole(tmp_path, "run-new")
    assert kept_whole(tmp_path, "run-new") is None


def test_the_editor_says_per_host_how_much_of_an_agent_file_reaches_the_start(
    files: ContextFileService,
) -> None:
    from types import SimpleNamespace

    from fleetmem.surfaces.web.files_pages import host_rows

    rng = random.Random()
    vocabulary = ["ledger", "fixture", "deploy", "billing", "cache", "queue", "retry", "shard"]
    for slug in ("notes", "tools", "role", "identity"):
        body = [" ".join(rng.choices(vocabulary, k=10)) for _ in range(110)]
        fill(files, slug, "\n".join([f"{slug}-FIRST", *body, f"{slug}-LAST"]), agent=AGENT)
    web = SimpleNamespace(app=SimpleNamespace(files=files))
    report = files.report(AGENT)
    [session] = [r for r in report.hosts if r.profile.key == "claude-code-session"]
    for slug in ("notes", "tools", "identity", "role"):
        rows = {r["host"]: r["reaches"] for r in host_rows(web, files.ref(slug, agent=AGENT))}  # type: ignore[arg-type]
        segment = session.assembly.segment(slug)
        if segment.pulled:
            assert rows["claude-code-session"].startswith("none at the start")
        elif segment.withheld_tokens:
            assert rows["claude-code-session"].startswith("its first lines")
        else:
            assert rows["claude-code-session"] == "all of it that fits its budget"
        assert rows["command"] == "all of it that fits its budget"
    assert any(s.withheld_tokens for s in session.assembly.segments)
    assert host_rows(web, files.ref("organization")) == []  # type: ignore[arg-type]
