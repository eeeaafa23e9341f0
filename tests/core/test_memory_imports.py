"""Reading statements out of Claude Code memory files and MCP memory graphs."""

from __future__ import annotations

import json

import pytest

from fleetmem.core.memory_imports import (
    UnreadableImport,
    read_candidates,
    read_claude_md,
    read_memory_json,
)

CLAUDE_MD = """---
name: project memory
---
# Project notes

@docs/architecture.md

- Run `make test` before every push.
* **Never** deploy billing on Fridays.
1. The ledger uses UTC
   everywhere, including fixtures.
- [x] Migrated to psycopg 3

A paragraph that
spans two lines.

```bash
rm -rf / # not a statement
```

<!-- a comment
over lines -->
| table | row |
|-------|-----|
---
## Empty heading
-
"""


def test_claude_md_items_and_paragraphs_become_candidates_in_order() -> None:
    found = read_claude_md(CLAUDE_MD)
    assert [c.body for c in found] == [
        "Run `make test` before every push.",
        "Never deploy billing on Fridays.",
        "The ledger uses UTC everywhere, including fixtures.",
        "Migrated to psycopg 3",
        "A paragraph that spans two lines.",
    ]
    assert [c.line for c in found] == [8, 9, 10, 12, 14]


def test_an_unclosed_code_block_swallows_nothing_after_it_as_statements() -> None:
    assert read_claude_md("- keep this\n```\n- code, not a fact\n") == read_claude_md(
        "- keep this\n"
    )


GRAPH = [
    {"type": "entity", "name": "Marina", "entityType": "person", "observations": ["Owns billing"]},
    {"type": "entity", "name": "api", "entityType": "repo", "observations": ["Uses UTC", " "]},
    {"type": "relation", "from": "Marina", "to": "api", "relationType": "maintains_daily"},
]


def test_memory_json_lines_and_the_older_single_object_read_alike() -> None:
    lines = "\n".join(json.dumps(item) for item in GRAPH) + "\n\n"
    single = json.dumps(
        {
            "entities": [{k: v for k, v in i.items() if k != "type"} for i in GRAPH[:2]],
            "relations": [{k: v for k, v in GRAPH[2].items() if k != "type"}],
        }
    )
    expected = [
        "Marina (person): Owns billing",
        "api (repo): Uses UTC",
        "Marina maintains daily api",
    ]
    assert [c.body for c in read_memory_json(lines)] == expected
    assert [c.body for c in read_memory_json(single)] == expected
    assert read_memory_json("") == []


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"type": "entity", "name": "a", "observations": []}\n{broken', 2),
        ("[1, 2]", 1),
        ('{"type": "entity", "name": "", "observations": []}', 1),
        ('{"type": "relation", "from": "a", "to": "b"}', 1),
        ('{"type": "entity", "name": "a", "observations": "not a list"}', 1),
        ('{"type": "thing"}', 1),
    ],
)
def test_a_malformed_memory_json_names_its_line(text: str, line: int) -> None:
    with pytest.raises(UnreadableImport) as caught:
        read_memory_json(text)
    assert caught.value.line == line


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown"):
        read_candidates("obsidian", "- a")
