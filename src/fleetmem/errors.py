"""The one exception hierarchy of fleetmem.

::

    FleetmemError                      every error fleetmem raises on purpose
    ├── ConfigError                    a configuration file names a bad table.key or value
    ├── InvalidInput                   a caller's input breaks a bound; names the field and value
    │   └── InvalidRunRecord           a run record fails its schema; nothing was stored
    ├── NotFound                       an object does not exist (or belongs to another workspace)
    │   └── UnknownEpisode             no episode with that id
    ├── NotAttributed                  a caller that is not tied to a run asked for run-scoped data
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


def _show(value: object, limit: int = 80) -> str:
    """A bounded, unambiguous rendering of a bad value for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ConfigError(FleetmemError):
    """A configuration key or value is wrong; names ``table.key`` and the value."""

    code = "config_invalid"

    def __init__(self, key: str, value: object, reason: str, *, source: str | None = None) -> None:
        self.key = key
        self.value = value
        self.reason = reason
        self.source = source
        where = f" in {source}" if source else ""
        FleetmemError.__init__(self, f"{key} = {_show(value)}{where}: {reason}")


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
    code = "provider_reserved"


class EmbeddingUnavailable(FleetmemError):
    code = "embeddings_unavailable"


class StoreError(FleetmemError):
    code = "store_error"
