"""Every hostile string, in every text and label field, read back through every agent-facing
tool: none of it is outside a fence (issue 16, part 4).

Per round one string of the fresh corpus (tests/fence_oracle.py) is written into each field,
with a payload word of its own per field: a fact's text; the glossary (read on demand), the
About-you file (every run), the project notebook and the agent's Notes; an episode's result
text and labels (adapter, model, branch) through ingest; the labels of an older run's rows
(agent, adapter, model, branch, pull request) and of a live run (agent, branch) and the
caller's own branch written straight into the store, as rows from before the ingress
boundary would hold them. Then a fresh run reads everything back through the official MCP
SDK client in process (``recall``, ``briefing``, the briefing resource, ``read_context_file``,
``update_notes``) and through the hook and prompt paths (the SessionStart answer, the
UserPromptSubmit answer, the prompt-prepended briefing). Each answer is split by the
documented-format reader: everything outside the fences must be fleetmem's template lines,
no payload word may be among them, and every field's payload must turn up inside a fence.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from fleetmem.core.context import SEGMENTS
from fleetmem.core.contextfiles import WORKSPACE_FILES
from fleetmem.core.scope import project_scope
from fleetmem.errors import FleetmemError
from fleetmem.integrations import briefing as briefings
from fleetmem.integrations import context_delivery
from fleetmem.integrations.claude_hooks import ClaudeHooks
from fleetmem.service.bootstrap import App
from fleetmem.service.files import Actor as FileActor
from fleetmem.surfaces.mcp.descriptions import BRIEFING_URI
from fleetmem.surfaces.mcp.server import build_server, fixed_token
from tests.conftest import make_record, session
from tests.fence_oracle import (
    PAYLOAD,
    Outside,
    Split,
    block_outside,
    context_outside,
    hostile_corpus,
    wrapper_outside,
)
from tests.mcp.conftest import API, CONFIG, client_for, ok_json, ok_text, resource_text, run_async
from tests.mcp.conftest import text as text_of

FIELDS = (
    "fact_text",
    "glossary",
    "about_you",
    "notebook",
    "notes",
    "episode_text",
    "ingest_adapter",
    "ingest_model",
    "ingest_branch",
    "row_agent",
    "row_adapter",
    "row_model",
    "row_branch",
    "row_pull_request",
    "live_agent",
    "live_branch",
    "caller_branch",
)
TOOLS = (
    "mcp_recall",
    "mcp_briefing",
    "mcp_resource",
    "mcp_read_context_file",
    "mcp_update_notes",
    "hook_session_start",
    "hook_user_prompt",
    "prompt_briefing",
)
TITLES = {s.title for s in SEGMENTS} | {f.title for f in WORKSPACE_FILES}
ME = FileActor("human", "marina")


def _for_field(h: str, index: int) -> tuple[str, str]:
    """``h`` with its payload word made this field's own; and that word."""
    word = PAYLOAD.search(h)
    assert word is not None
    own = word.group(0)[:-2] + f"{index:02x}"
    return h.replace(word.group(0), own), own


def _sql(app: App, statement: str, *args: object) -> None:
    with app.store.transaction():
        app.store.db.conn.execute(statement, args)


def _file(app: App, name: str, body: str, **where: str) -> None:
    """A context file holding ``body`` as an old row would: saved plainly, then rewritten."""
    ref = app.files.ref(name, **where)
    view = app.files.get(ref)
    if view.revision == 0:  # saved once (people's writes are rate-limited), then rewritten
        app.files.save(ref, f"Plain {name}.\n", base_revision=0, actor=ME)
    _sql(app, "UPDATE context_files SET body = ? WHERE kind = ? AND name = ?", body, ref.kind, name)


def _seed_round(app: App, round_no: int, h: str) -> dict[str, str]:
    """Write ``h`` into every field; returns field -> payload word."""
    words: dict[str, str] = {}
    v: dict[str, str] = {}
    for index, name in enumerate(FIELDS):
        v[name], words[name] = _for_field(h, index)
    # Two fact writes a round (this and the hook's) would meet the per-minute rate limit,
    # which is not what this test is about: its window is emptied.
    _sql(app, "DELETE FROM fact_rate")
    try:
        app.facts.add(v["fact_text"], scope=project_scope(API))
    except FleetmemError:  # refused at ingress: the same words as an old row
        fact = app.facts.add(f"Carrier {words['fact_text']}.", scope=project_scope(API)).fact
        _sql(app, "UPDATE facts SET body = ? WHERE id = ?", v["fact_text"], fact.id)
    _file(app, "glossary", v["glossary"])
    _file(app, "about_you", v["about_you"])
    _file(app, "notebook", v["notebook"], repo=API)
    _file(app, "notes", v["notes"], agent="api-fixer")
    base = dict(agent="api-fixer", started_at="2026-11-28T09:14:03Z")
    through = make_record(
        run_id=f"ingest-{round_no}",
        adapter=v["ingest_adapter"],
        model={"served": v["ingest_model"]},
        result_text=v["episode_text"],
        sessions=[session(branch=v["ingest_branch"], edits=("billing/ledger.py",))],
        **base,
    )
    try:
        app.memory.ingest_run(through)
    except FleetmemError:  # the ingress boundary refused a label: the text goes on its own
        app.memory.ingest_run(
            make_record(run_id=f"ingest-{round_no}", result_text=v["episode_text"], **base)
        )
    old = f"old-{round_no}"
    app.memory.ingest_run(
        make_record(run_id=old, result_text=f"Old run {words['row_agent']}.", **base)
    )
    for table in ("episodes", "runs"):
        _sql(
            app,
            f"UPDATE {table} SET agent = ?, adapter = ?, model = ?, branch = ? WHERE run_id = ?",
            v["row_agent"],
            v["row_adapter"],
            v["row_model"],
            v["row_branch"],
            old,
        )
    _sql(app, "UPDATE runs SET pull_request = ? WHERE run_id = ?", v["row_pull_request"], old)
    # The old run is the latest to have ended, so the recent-runs sections show it.
    ended = time.time() - 3600 + round_no
    _sql(app, "UPDATE runs SET ended_at = ? WHERE run_id = ?", ended, old)
    other = app.runs.open_run("codex", repo=API, branch="main", run_id=f"other-{round_no}")
    app.runs.touch(other.token, ["billing/ledger.py"])
    _sql(
        app,
        "UPDATE live_runs SET agent = ?, branch = ? WHERE run_id = ?",
        v["live_agent"],
        v["live_branch"],
        other.run_id,
    )
    return words


def _json_outside(answer: dict[str, Any], fenced: tuple[str, ...]) -> Split:
    """A tool's JSON: its fenced fields split, every other value outside."""
    split = Split()
    for key, value in answer.items():
        if key in fenced and isinstance(value, str):
            part, before, after = block_outside(value)
            assert (before, after) == ("", "")
            split.add(part)
        else:
            split.outside.append(json.dumps(value, ensure_ascii=False))
    return split


def _session_start(answer: str) -> Split:
    context = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    split, before, after = block_outside(context, inner_wrapper=True)
    assert after == ""
    split.add(context_outside(before.rstrip("\n"), TITLES))
    return split


def _user_prompt(answer: str) -> Split:
    if not answer:
        # Capture declined the words (a quote, a question, code...): nothing was stored and
        # nothing reached the model, so nothing can be outside a fence.
        return Split()
    text = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    split = Split()
    while "<untrusted-data " in text:
        part, before, text = block_outside(text)
        split.add(part)
        line = before.strip("\n")
        ok = line.startswith("fleetmem remembered fact f_") or line.startswith(
            "fleetmem did not remember it ("
        )
        if not ok or PAYLOAD.search(line):
            raise Outside(f"not a template line: {line!r}")
        split.outside.append(line)
    closing = "(Confirm this to the user in one line, quoting the stored wording.)"
    assert text.strip("\n") == closing
    split.outside.append(text)
    return split


async def _mcp_reads(app: App, token: str, query: tuple[str, ...]) -> dict[str, Split]:
    server = build_server(app, fixed_token(token))
    out: dict[str, Split] = {}
    try:
        async with client_for(server) as client:
            out["mcp_recall"] = Split()
            for words in query:  # one recall per payload word, so each item is found
                recall = ok_text(await client.call_tool("recall", {"query": words, "limit": 5}))
                out["mcp_recall"].add(wrapper_outside(recall))
            brief = ok_text(await client.call_tool("briefing", {"refresh": True}))
            out["mcp_briefing"] = wrapper_outside(brief)
            resource = resource_text(await client.read_resource(BRIEFING_URI))
            out["mcp_resource"] = wrapper_outside(resource)
            read = ok_json(await client.call_tool("read_context_file", {"name": "glossary"}))
            out["mcp_read_context_file"] = _json_outside(read, ("text",))
            notes = await client.call_tool("update_notes", {"text": "Keep going."})
            if notes.is_error:  # an old Notes body the append would keep is refused: the
                # refusal names the problem, never the text (checked as outside text)
                out["mcp_update_notes"] = Split(outside=[text_of(notes)])
            else:
                answer = json.loads(text_of(notes))
                out["mcp_update_notes"] = _json_outside(answer, ("diff", "proposed_text"))
    finally:
        server.close()
    return out


@pytest.mark.slow
def test_no_hostile_string_reaches_an_agent_outside_a_fence(make_app: Callable[..., App]) -> None:
    app = make_app(CONFIG + "[agent.claude-code]\nmemory_briefing = true\n")
    corpus = hostile_corpus(random.Random(secrets.randbits(64)))
    outside_hits: list[tuple[int, str, str]] = []
    seen: Counter[tuple[str, str]] = Counter()
    checked = 0
    for round_no, h in enumerate(corpus):
        words = _seed_round(app, round_no, h)
        me = app.runs.open_run("api-fixer", repo=API, branch="main", run_id=f"me-{round_no}")
        _sql(app, "UPDATE live_runs SET branch = ? WHERE run_id = ?", words_value(h, 16), me.run_id)
        token = me.token
        query = (words["fact_text"], words["episode_text"], words["row_agent"])
        splits = run_async(lambda: _mcp_reads(app, token, query))  # noqa: B023
        caller = app.agent_memory.caller(me.token)
        assert caller is not None
        context = context_delivery.for_session(
            app, agent="api-fixer", token=me.token, run_id=me.run_id
        )
        served = app.agent_memory.briefing(caller, delivery="prompt").text
        block = briefings.fence(served, "").rstrip("\n")
        splits["hook_session_start"] = _session_start(
            context_delivery.session_start_answer(context, block)
        )
        hooks = ClaudeHooks(app, agent="api-fixer", environ={})
        first_line = h.split("\n")[0].strip() or "x"
        prompt = {"prompt": f"remember: {first_line}", "session_id": f"s-{round_no}"}
        splits["hook_user_prompt"] = _user_prompt(hooks.user_prompt_submit(prompt))
        prompted, before, after = block_outside(
            briefings.fence(served, "Fix the ledger test."), inner_wrapper=True
        )
        assert (before, after) == ("", "\n\nFix the ledger test.")
        splits["prompt_briefing"] = prompted
        assert set(splits) == set(TOOLS)
        for tool, split in splits.items():
            checked += 1
            for line in split.outside:
                outside_hits += [(round_no, tool, m) for m in PAYLOAD.findall(line)]
            inside = " ".join(split.inside)
            for name, word in words.items():
                if word in inside:
                    seen[(name, tool)] += 1
    rounds = len(corpus)
    table = {name: {t: seen[(name, t)] for t in TOOLS if seen[(name, t)]} for name in FIELDS}
    print(f"\nhostile fence: {rounds} strings x {len(FIELDS)} fields x {len(TOOLS)} tools")
    print(f"answers checked {checked}; payloads outside a fence: {len(outside_hits)}")
    for name, where in table.items():
        print(f"  {name}: {where}")
    assert rounds >= 50 and checked == rounds * len(TOOLS)
    assert outside_hits == []
    # Every field was read back inside a fence, in most rounds, by some tool. Not asked of
    # labels given through ingest (the ingress boundary may refuse them, and the round then
    # ingests without them) nor of the caller's branch, which only a document header would
    # carry and which is therefore withheld there, not fenced.
    for name in FIELDS:
        if name.startswith("ingest_") or name == "caller_branch":
            continue
        best = max((seen[(name, t)] for t in TOOLS), default=0)
        assert best >= rounds // 2, (name, table[name])


def words_value(h: str, index: int) -> str:
    return _for_field(h, index)[0]
