"""Fill one workspace with a row of every kind it owns, through the services (shared by the
workspace tests of the store, service, HTTP and CLI layers)."""

from __future__ import annotations

import numpy as np

from fleetmem.core.facts import Actor
from fleetmem.service.bootstrap import App
from fleetmem.service.file_types import Actor as FileActor
from fleetmem.store.workspaces import FACT_TABLES, WORKSPACE_TABLES

#: ``[agent.writer]`` may edit its own files; ``[agent.asker]`` may not (its edits become
#: proposals).
AGENTS = "[agent.writer]\nedit_agent_files = true\n[agent.asker]\nedit_agent_files = false\n"
CONFIG = '[model_api]\nembedding_model = ""\n' + AGENTS
ALICE = Actor("human", "alice")
MARINA = FileActor("user", "marina")
MODEL = "test-model"


def fill(app: App, tag: str) -> dict[str, str]:
    """Write a row into every workspace-owned table of ``app.workspace``; the ids made, by
    kind. ``tag`` makes the words differ between workspaces."""
    facts, files = app.facts, app.files
    first = facts.add(f"Deploys of {tag} go out on Tuesdays.", actor=ALICE).fact
    second = facts.add(f"Deploys of {tag} go out on Tuesday.", actor=ALICE).fact
    facts.edit(first.id, f"Deploys of {tag} go out on Tuesdays only.", actor=ALICE)
    facts.keep_both(first.id, second.id, actor=ALICE)
    facts.vote(run_id=f"run-{tag}", agent="writer", repo=None, fact_id=first.id, stance="support")
    facts.serve_to_run([first.id], run_id=f"run-{tag}", agent="writer", surface="recall")
    row = app.store.fact_get(app.workspace, first.id)
    assert row is not None
    vector = np.ones(4, dtype=np.float32) / 2
    app.store.cache_embedding(row.content_hash, MODEL, vector)
    app.store.fact_link_vector(first.id, MODEL, row.content_hash)
    voice = files.ref("voice")
    files.save(voice, f"Short sentences for {tag}.", base_revision=0, actor=MARINA)
    files.update_notes(agent="writer", text=f"{tag} pins Python 3.11.", run_id=f"run-{tag}")
    proposal = files.update_notes(agent="asker", text=f"{tag} wants a change.", run_id="r-2")
    files.note_project(agent="writer", repo="github.com/acme/api", text=f"{tag} notebook.")
    files.assemble("writer", repo="github.com/acme/api", run_id=f"run-{tag}")
    return {
        "fact": first.id,
        "other_fact": second.id,
        "proposal": str(proposal.proposal_id),
        "content_hash": row.content_hash,
    }


def every_table() -> tuple[str, ...]:
    return (*WORKSPACE_TABLES, *FACT_TABLES)
