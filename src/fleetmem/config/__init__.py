"""Layered TOML configuration -> validated, frozen settings.

Layers, later overriding earlier key by key (tables merge deeply):

1. ``$FLEETMEM_HOME/fleetmem.toml``  (the global file)
2. ``$FLEETMEM_HOME/fleetmem.d/*.toml`` (drop-ins, in lexical order of file name)
3. ``<repo root>/.fleetmem.toml``      (a project file; may only narrow)

Missing files are fine. What each table and key accepts is the declarative ``SCHEMA`` in
:mod:`fleetmem.config.schema`: a later table (``[mcp.NAME]``, ``[facts]``, ...) is a new entry
there plus a settings field in :mod:`fleetmem.config.settings`, not a new code path. Every error
is a ``ConfigError`` naming the dotted key, the value, the reason and the file it came from.

The modules, in the order a load passes through them: ``settings`` (the dataclasses),
``values`` (one parser per kind of value), ``schema`` (which key takes which parser),
``layers`` (one file read and checked), ``checks`` (entries merged, cross-key rules) and
``loading`` (which files, in which order; the reloadable holder).
"""

from __future__ import annotations

from fleetmem.config.loading import (
    ConfigHolder,
    apply_project,
    default_home,
    load_global,
    load_settings,
)
from fleetmem.config.schema import SCHEMA, KeySpec, Project, TableSpec
from fleetmem.config.settings import (
    ADAPTERS,
    BUILTIN_PROVIDER,
    DROPIN_DIR,
    GLOBAL_FILE,
    LOCAL_EMBEDDING_MODEL,
    PROJECT_FILE,
    PROMPT_KEYS,
    RECALL_CUES,
    AgentSettings,
    EpisodeSettings,
    FactSettings,
    FactThresholds,
    McpSettings,
    MemorySettings,
    ModelApiSettings,
    RunsSettings,
    ServerSettings,
    ServerToken,
    Settings,
    StoreSettings,
    VerifyPattern,
    default_settings,
)
from fleetmem.config.values import MAX_PROMPT_CHARS, Parser

__all__ = [
    "ADAPTERS",
    "BUILTIN_PROVIDER",
    "DROPIN_DIR",
    "GLOBAL_FILE",
    "LOCAL_EMBEDDING_MODEL",
    "MAX_PROMPT_CHARS",
    "PROJECT_FILE",
    "PROMPT_KEYS",
    "RECALL_CUES",
    "SCHEMA",
    "AgentSettings",
    "ConfigHolder",
    "EpisodeSettings",
    "FactSettings",
    "FactThresholds",
    "KeySpec",
    "McpSettings",
    "MemorySettings",
    "ModelApiSettings",
    "Parser",
    "Project",
    "RunsSettings",
    "ServerSettings",
    "ServerToken",
    "Settings",
    "StoreSettings",
    "TableSpec",
    "VerifyPattern",
    "apply_project",
    "default_home",
    "default_settings",
    "load_global",
    "load_settings",
]
