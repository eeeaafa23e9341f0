"""Where the terminal reads from: the local store, or a daemon over its HTTP API.

Both sources answer with the same JSON documents as ``/api/v1`` (the local one builds them
with the very view functions the API routes use), so every screen renders one shape whichever
way it was reached, and what the terminal shows is what ``--json`` and the web UI show.
"""

from __future__ import annotations

from typing import Any, Protocol

from fleetmem.service.fact_base import local_user

#: How many rows each list asks for: a screen's worth and some scrolling.
LIST_LIMIT = 100


class TuiSource(Protocol):
    """What the terminal reads and the one thing it writes (a fact review)."""

    where: str

    def runs(self) -> list[dict[str, Any]]: ...
    def presence(self) -> list[dict[str, Any]]: ...
    def briefing(self, agent: str) -> dict[str, Any]: ...
    def episodes(self) -> list[dict[str, Any]]: ...
    def episode(self, episode_id: str) -> dict[str, Any]: ...
    def proposals(self) -> list[dict[str, Any]]: ...
    def review(self, fact_id: str, action: str) -> dict[str, Any]: ...
    def status(self) -> dict[str, Any]: ...


class LocalSource:
    """The store under this machine's home, through the service layer."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.where = str(app.home)

    def runs(self) -> list[dict[str, Any]]:
        from fleetmem.surfaces import runs_views

        return [runs_views.summary_view(r) for r in self.app.runs.list_runs(limit=LIST_LIMIT)]

    def presence(self) -> list[dict[str, Any]]:
        from fleetmem.surfaces import runs_views

        return list(runs_views.presence_view(self.app.runs.live_runs())["runs"])

    def briefing(self, agent: str) -> dict[str, Any]:
        from fleetmem.surfaces.agent_views import briefing_preview

        return briefing_preview(self.app, agent)

    def episodes(self) -> list[dict[str, Any]]:
        from fleetmem.surfaces import views

        rows = self.app.memory.list_episodes(limit=LIST_LIMIT)
        return [views.episode_brief(r) for r in rows]

    def episode(self, episode_id: str) -> dict[str, Any]:
        from fleetmem.surfaces import views

        row = self.app.memory.get_episode(episode_id)
        return views.episode_detail(row, self.app.memory.episode_index(episode_id))

    def proposals(self) -> list[dict[str, Any]]:
        from fleetmem.surfaces import fact_views

        page = self.app.facts.list(status="proposed", limit=LIST_LIMIT)
        return list(fact_views.page_view(page)["facts"])

    def review(self, fact_id: str, action: str) -> dict[str, Any]:
        from fleetmem.surfaces import fact_views

        return fact_views.fact_view(self.app.facts.review(fact_id, action, actor=local_user()))

    def status(self) -> dict[str, Any]:
        return dict(self.app.memory.status())


class RemoteSource:
    """A daemon's ``/api/v1``, with the CLI's client (its token and its error mapping)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.where = str(client.base_url)

    def _get(self, path: str, **params: Any) -> Any:
        return self.client.call("GET", path, params=params)

    def runs(self) -> list[dict[str, Any]]:
        return list(self._get("/api/v1/runs", limit=LIST_LIMIT)["runs"])

    def presence(self) -> list[dict[str, Any]]:
        return list(self._get("/api/v1/presence")["runs"])

    def briefing(self, agent: str) -> dict[str, Any]:
        return dict(self._get(f"/api/v1/agents/{_segment(agent)}/briefing"))

    def episodes(self) -> list[dict[str, Any]]:
        return list(self._get("/api/v1/episodes", limit=LIST_LIMIT)["episodes"])

    def episode(self, episode_id: str) -> dict[str, Any]:
        return dict(self._get(f"/api/v1/episodes/{_segment(episode_id)}"))

    def proposals(self) -> list[dict[str, Any]]:
        return list(self._get("/api/v1/facts", status="proposed", limit=LIST_LIMIT)["facts"])

    def review(self, fact_id: str, action: str) -> dict[str, Any]:
        path = f"/api/v1/facts/{_segment(fact_id)}/review"
        return dict(self.client.call("POST", path, body={"action": action}))

    def status(self) -> dict[str, Any]:
        return dict(self._get("/api/v1/status"))


def _segment(value: str) -> str:
    import urllib.parse

    # Ids come from the screen, but one typed with a "/" must not reach another route.
    return urllib.parse.quote(value, safe="")
