"""The stream parsers over recorded output, and the argv each adapter builds."""

from __future__ import annotations

import json

from fleetmem.integrations.adapters import get_adapter
from fleetmem.integrations.adapters.base import CommandRun, Edit
from fleetmem.integrations.adapters.claude_code import ClaudeStreamParser
from fleetmem.integrations.adapters.codex import CodexStreamParser
from fleetmem.integrations.records import ProcessEnd, decide_outcome, verifications


def _feed(parser: ClaudeStreamParser | CodexStreamParser, events: list[object]) -> None:
    for event in events:
        parser.feed(event if isinstance(event, str) else json.dumps(event))
    parser.finish()


def _assistant(*content: dict[str, object], parent: str | None = None) -> dict[str, object]:
    return {"type": "assistant", "session_id": "s-1", "parent_tool_use_id": parent,
            "message": {"model": "claude-x", "content": list(content)}}  # fmt: skip


def _result(tool_id: str, is_error: bool, content: str = "") -> dict[str, object]:
    return {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": tool_id, "is_error": is_error, "content": content}
    ]}}  # fmt: skip


def test_claude_stream_gives_session_model_edits_commands_result_and_cost() -> None:
    parser = ClaudeStreamParser()
    _feed(parser, [
        "not json at all",
        {"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-x"},
        _assistant({"type": "tool_use", "id": "t1", "name": "Edit",
                    "input": {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"}}),
        _result("t1", False),
        _assistant({"type": "tool_use", "id": "t2", "name": "Edit",
                    "input": {"file_path": "/r/b.py"}}),
        _result("t2", True, "String to replace not found"),
        _assistant({"type": "tool_use", "id": "t3", "name": "Bash",
                    "input": {"command": "pytest -q"}}),
        _result("t3", True, "Error: Exit code 2\nboom"),
        _assistant({"type": "tool_use", "id": "t4", "name": "Write",
                    "input": {"file_path": "/r/sub.md"}}, parent="task-1"),
        _result("t4", False),
        _assistant({"type": "tool_use", "id": "t5", "name": "NotebookEdit",
                    "input": {"notebook_path": "/r/n.ipynb"}}),
        {"type": "result", "subtype": "success", "is_error": False, "result": "done",
         "session_id": "s-1", "total_cost_usd": 0.25},
    ])  # fmt: skip
    obs = parser.observation
    assert (obs.session_id, obs.model, obs.result_text) == ("s-1", "claude-x", "done")
    assert (obs.cost_usd, obs.cost_source, obs.failure) == (0.25, "reported", None)
    assert obs.events == [
        Edit("/r/a.py"),  # the failed edit of b.py changed nothing
        CommandRun("pytest -q", 2, True),
        Edit("/r/sub.md", subagent=True),
        Edit("/r/n.ipynb"),  # no result arrived: it may have changed the file
    ]
    checks = verifications(obs.commands())
    assert decide_outcome(ProcessEnd(returncode=0), obs, checks) == ("failed", "verify_failed")


def test_claude_error_results_map_to_reasons() -> None:
    for subtype, is_error, reason in [
        ("error_max_turns", True, "budget_exceeded"),
        ("error_during_execution", True, "agent_error"),
        ("success", True, "model_error"),
    ]:
        parser = ClaudeStreamParser()
        _feed(parser, [{"type": "result", "subtype": subtype, "is_error": is_error,
                        "result": "Credit balance is too low"}])  # fmt: skip
        assert parser.observation.failure == reason


def test_codex_events_and_the_legacy_form() -> None:
    parser = CodexStreamParser()
    _feed(parser, [
        {"type": "thread.started", "thread_id": "th-1"},
        {"type": "item.started", "item": {"id": "1", "type": "command_execution",
                                          "command": "pytest", "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "1", "type": "command_execution",
                                            "command": "pytest", "exit_code": 1,
                                            "status": "failed", "aggregated_output": ""}},
        {"type": "item.completed", "item": {"id": "2", "type": "command_execution",
                                            "command": "rm -rf /", "status": "declined"}},
        {"type": "item.completed", "item": {"id": "3", "type": "file_change", "status": "failed",
                                            "changes": [{"path": "x.py", "kind": "update"}]}},
        {"type": "item.completed", "item": {"id": "4", "type": "file_change",
                                            "status": "completed",
                                            "changes": [{"path": "y.py", "kind": "add"}]}},
        {"type": "item.completed", "item": {"id": "5", "type": "agent_message", "text": "ok"}},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}},
    ])  # fmt: skip
    obs = parser.observation
    assert obs.session_id == "th-1" and obs.result_text == "ok" and obs.finished
    assert obs.events == [CommandRun("pytest", 1, True), Edit("y.py")]

    legacy = CodexStreamParser()
    _feed(legacy, [
        {"id": "0", "msg": {"type": "session_configured", "session_id": "s", "model": "o4"}},
        {"id": "1", "msg": {"type": "exec_command_begin", "call_id": "c",
                            "command": ["bash", "-lc", "make test"]}},
        {"id": "1", "msg": {"type": "exec_command_end", "call_id": "c", "exit_code": 0}},
        {"id": "2", "msg": {"type": "patch_apply_begin", "changes": {"/r/a.py": {}}}},
        {"id": "3", "msg": {"type": "task_complete", "last_agent_message": "fine"}},
    ])  # fmt: skip
    obs = legacy.observation
    assert (obs.model, obs.result_text) == ("o4", "fine")
    assert obs.events == [CommandRun("bash -lc 'make test'", 0, False), Edit("/r/a.py")]


def test_each_adapter_puts_the_prompt_last() -> None:
    prompt = "-p looks like a flag\n\nbut is the prompt"
    claude = get_adapter("claude-code").argv("claude", ["--permission-mode", "acceptEdits"],
                                              "opus", prompt)  # fmt: skip
    assert claude == ["claude", "--permission-mode", "acceptEdits", "--print", "--output-format",
                      "stream-json", "--verbose", "--model", "opus", "--", prompt]  # fmt: skip
    codex = get_adapter("codex").argv("codex", [], None, prompt)
    assert codex == ["codex", "exec", "--json", "--", prompt]
    command = get_adapter("command").argv("/bin/h", ["a"], None, prompt)
    assert command == ["/bin/h", "a", prompt]
    assert get_adapter("command").argv("/bin/h", [], None, None) == ["/bin/h"]
