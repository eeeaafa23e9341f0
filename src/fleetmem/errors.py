"""The one exception hierarchy of fleetmem.

::

    FleetmemError                      every error fleetmem raises on purpose
    ├── ConfigError                    a configuration file names a bad table.key or value
    │   └── UnknownAgentWorkspace      an agent's ``workspace`` names no workspace of the store
    ├── InvalidInput                   a caller's input breaks a bound; names the field and value
    │   └── InvalidRunRecord           a run record fails its schema; nothing was stored
    ├── NotFound                       an object does not exist (or belongs to another workspace)
    │   ├── UnknownEpisode             no episode with that id
    │   ├── UnknownFact                no fact with that id in this workspace
    │   └── UnknownWorkspace           no workspace by that id or name (or not the caller's)
    ├── Conflict                       a write conflicts with what is stored; names the object
    │   ├── DuplicateFact              the same fact (normalized text, same scope) already exists
    │   ├── InvalidTransition          a fact's status does not allow that action
    │   ├── CapReached                 a workspace limit is full (facts, pins, review backlog)
    │   ├── DuplicateWorkspace         another workspace's name (or id) reads the same
    │   ├── WorkspaceInUse             an agent's configuration binds it to the workspace
    │   └── StaleRevision              a save was based on an older revision of a context file
    ├── RateLimited                    too many writes from one user; carries retry_after seconds
    ├── NotAttributed                  a caller that is not tied to a run asked for run-scoped data
    ├── NotPermitted                   an attributed caller may not do this (an agent writing files)
    ├── NoRepository                   a path is outside any git repository
    ├── ProviderError                  an episode provider failed; carries the provider name
    │   ├── ProviderUnavailable        timed out, errored, or its breaker is open
    │   ├── ProviderIncompatible       missing tool or unsupported contract version
    │   └── ProviderReserved           an agent tried to reach the provider upstream
    ├── EmbeddingUnavailable           the embedder could not embed (model missing, API down)
    └── StoreError                     the store failed (locked past its timeout, corrupt)

Expected outcomes (a dropped item, a degraded recall, a skipped episode) are return values,
not exceptions. Errors are translated at the edges: CLI exit codes, HTTP status codes, MCP
tool errors. Messages never contain episode bodies, provider text or queries.
"""

from __future__ import annotations

import math


class FleetmemError(Exception):
    """Base of every error fleetmem raises on purpose.

    ``code`` is a stable machine-readable identifier used by the HTTP API and ``--json``.
    """

    code = "error"

    def __init__(self, message: str, **context: object) -> None:
        self.message = message
        self.context = {k: v for k, v in context.items() if v is not None}
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.context:
            return self.message
        details = " ".join(f"{k}={v}" for k, v in self.context.items())
        return f"{self.message} ({details})"

    @property
    def summary(self) -> str:
        """The message for a person reading a page: what went wrong and what to do, without
        the ``key=value`` context kept for logs, scripts and the CLI."""
        return self.message


def _show(value: object, limit: int = 80) -> str:
    """A bounded, unambiguous rendering of a bad value for an error message: URL userinfo
    hidden and secrets redacted, since a bad value is often a credential in the wrong place."""
    from fleetmem.core.reveal import show

    return show(value, limit)


class ConfigError(FleetmemError):
    """A configuration key or value is wrong; names ``table.key`` and the value."""

    code = "config_invalid"

    def __init__(self, key: str, value: object, reason: str, *, source: str | None = None) -> None:
        self.key = key
        self.value = value
        self.reason = reason
        self.source = source
        where = f" in {source}" if source else ""
        from fleetmem.core.reveal import show_config

        # A key named like a credential (*_key, *token*, *password*...) never shows its value.
        FleetmemError.__init__(self, f"{key} = {show_config(key, value)}{where}: {reason}")


class UnknownAgentWorkspace(ConfigError):
    """``[agent.NAME] workspace`` names a workspace the store does not have (deleted, renamed
    or never created): the agent's runs are refused rather than served another workspace."""

    code = "unknown_agent_workspace"

    def __init__(self, agent: str, workspace: str, *, source: str | None = None) -> None:
        self.agent = agent
        self.workspace = workspace
        ConfigError.__init__(
            self,
            f"agent.{agent}.workspace",
            workspace,
            f"agent {agent} is bound to workspace {workspace!r}, and no workspace has that id "
            "or name (fleetmem workspaces list): its runs get no memory until the key names "
            "an existing workspace or is removed (then they act in default)",
            source=source,
        )


class InvalidInput(FleetmemError):
    """A caller's input is out of bounds; names the field and the value."""

    code = "invalid_input"

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        FleetmemError.__init__(self, f"{field} = {_show(value)}: {reason}")


class InvalidRunRecord(InvalidInput):
    """A run record fails validation; nothing from it was stored."""

    code = "invalid_run_record"


class NotFound(FleetmemError):
    code = "not_found"


class UnknownEpisode(NotFound):
    code = "unknown_episode"

    def __init__(self, episode_id: str) -> None:
        self.episode_id = episode_id
        NotFound.__init__(self, "unknown episode", episode=episode_id)


class UnknownFact(NotFound):
    code = "unknown_fact"

    def __init__(self, fact_id: str) -> None:
        self.fact_id = fact_id
        NotFound.__init__(self, "unknown fact", fact=fact_id)


class UnknownWorkspace(NotFound):
    code = "unknown_workspace"

    def __init__(self, workspace: str) -> None:
        self.workspace = workspace
        NotFound.__init__(self, "unknown workspace", workspace=workspace)


class Conflict(FleetmemError):
    """The write conflicts with stored state; ``existing`` names the object in the way."""

    code = "conflict"

    def __init__(self, message: str, *, existing: str | None = None, **context: object) -> None:
        self.existing = existing
        FleetmemError.__init__(self, message, existing=existing, **context)


class DuplicateFact(Conflict):
    code = "duplicate_fact"


class DuplicateWorkspace(Conflict):
    """A workspace name that reads the same as another workspace's name or id; ``field``
    names the input (``name``)."""

    code = "duplicate_workspace"

    def __init__(self, message: str, *, existing: str, field: str = "name") -> None:
        self.field = field
        Conflict.__init__(self, message, existing=existing)


class WorkspaceInUse(Conflict):
    """A workspace some ``[agent.NAME] workspace`` names cannot be deleted."""

    code = "workspace_in_use"


class InvalidTransition(Conflict):
    code = "invalid_transition"


class CapReached(Conflict):
    code = "cap_reached"


class RateLimited(FleetmemError):
    """Too many requests from one user; try again after ``retry_after`` seconds."""

    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: float, **context: object) -> None:
        self.retry_after = retry_after
        FleetmemError.__init__(self, message, retry_after=f"{retry_after:.0f}s", **context)

    @property
    def summary(self) -> str:
        wait = max(1, math.ceil(self.retry_after))
        said = super().summary.rstrip(".")
        return f"{said[:1].upper()}{said[1:]}. Try again in {wait} second{'s' * (wait != 1)}."


class StaleRevision(Conflict):
    """A context-file save named an older revision than the current one; nothing was written.

    ``current_revision``, ``changed_by`` and ``changed_at`` describe the revision in the way, so
    a surface can show it next to the caller's text, which it keeps.
    """

    code = "stale_revision"

    def __init__(
        self,
        file: str,
        *,
        base_revision: int,
        current_revision: int,
        changed_by: str,
        changed_at: float,
    ) -> None:
        self.file = file
        self.base_revision = base_revision
        self.current_revision = current_revision
        self.changed_by = changed_by
        self.changed_at = changed_at
        Conflict.__init__(
            self,
            "This file changed while you were editing. Reload to see the current version"
            " — your text is kept.",
            existing=f"{file}@{current_revision}",
            base_revision=base_revision,
            changed_by=changed_by,
        )


class NotPermitted(FleetmemError):
    """An attributed caller asked for something its grants do not allow."""

    code = "not_permitted"


class NotAttributed(FleetmemError):
    code = "not_attributed"


class NoRepository(FleetmemError):
    code = "no_repository"


class ProviderError(FleetmemError):
    code = "provider_error"

    def __init__(self, message: str, *, provider: str, **context: object) -> None:
        self.provider = provider
        FleetmemError.__init__(self, message, provider=provider, **context)


class ProviderUnavailable(ProviderError):
    code = "provider_unavailable"


class ProviderIncompatible(ProviderError):
    code = "provider_incompatible"


class ProviderReserved(ProviderError):
    """An agent named a provider tool; refused as ``not_permitted`` (seed 000 REQ-2)."""

    code = "not_permitted"


class EmbeddingUnavailable(FleetmemError):
    code = "embeddings_unavailable"


class StoreError(FleetmemError):
    code = "store_error"
