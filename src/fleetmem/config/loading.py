"""Where the files are, the order they are layered in, and the daemon's reloadable holder."""

from __future__ import annotations

import threading
from pathlib import Path

from fleetmem.config.checks import build_settings
from fleetmem.config.layers import Role, read_layer
from fleetmem.config.settings import DROPIN_DIR, GLOBAL_FILE, PROJECT_FILE, Entry, Settings
from fleetmem.errors import ConfigError

# Re-exported: fleetmem.config's callers import it from here.
from fleetmem.homedir import default_home as default_home


def _dropins(home: Path) -> list[Path]:
    directory = home / DROPIN_DIR
    if not directory.exists():
        return []
    if not directory.is_dir():
        raise ConfigError("<file>", str(directory), "expected a directory of *.toml drop-ins")
    # Dot files are editor and backup leftovers, not drop-ins.
    found = [p for p in directory.glob("*.toml") if p.is_file() and not p.name.startswith(".")]
    return sorted(found, key=lambda p: p.name)


def load_global(home: Path) -> Settings:
    """Settings from ``home/fleetmem.toml`` and ``home/fleetmem.d/*.toml``; defaults if absent.

    Raises ``ConfigError`` naming the key, value, reason and file on the first problem.
    """
    layers = [
        layer
        for path in (home / GLOBAL_FILE, *_dropins(home))
        if (layer := read_layer(path, Role.GLOBAL)) is not None
    ]
    entries: dict[str, Entry] = {}
    tables: set[tuple[str, ...]] = set()
    for layer in layers:
        entries.update(layer.entries)
        tables |= layer.tables
    return build_settings(entries, tables, tuple(layer.source for layer in layers))


def apply_project(settings: Settings, project_root: Path) -> Settings:
    """``settings`` narrowed by ``project_root/.fleetmem.toml``; unchanged if it is absent.

    A project file may declare agents and set their ``memory_record`` / ``record_trace`` to
    false; anything global-only or widening raises ``ConfigError``.
    """
    layer = read_layer(project_root / PROJECT_FILE, Role.PROJECT)
    if layer is None:
        return settings
    tables = {("agent", name) for name in settings.agents} | layer.tables
    tables |= {("mcp", name) for name in settings.mcp}
    entries = {**settings._entries, **layer.entries}
    return build_settings(entries, tables, (*settings.sources, layer.source))


def load_settings(home: Path, project_root: Path | None = None) -> Settings:
    """The global file, its drop-ins, then (if ``project_root`` is given) the project file."""
    settings = load_global(home)
    return settings if project_root is None else apply_project(settings, project_root)


class ConfigHolder:
    """The daemon's current settings; ``reload`` (on SIGHUP) keeps the last good ones on error.

    Readers never block: ``current`` is one reference, swapped whole by a successful reload.
    Reloads are serialized.
    """

    def __init__(self, home: Path, project_root: Path | None = None) -> None:
        """Load now; raises ``ConfigError`` if the first load fails (nothing good to keep)."""
        self._home = home
        self._project_root = project_root
        self._reload_lock = threading.Lock()
        self._seen = self._fingerprint()
        self._current = load_settings(home, project_root)

    @property
    def current(self) -> Settings:
        """The last settings that loaded without error."""
        return self._current

    def reload(self) -> ConfigError | None:
        """Load the files again; on success swap them in and return None, else return the error."""
        with self._reload_lock:
            try:
                settings = load_settings(self._home, self._project_root)
            except ConfigError as exc:
                return exc
            self._current = settings
            return None

    def reload_if_changed(self) -> ConfigError | None:
        """Reload when a configuration file was added, removed or rewritten since the last
        look (a few ``stat`` calls); the error of a failed reload, else None.

        For work done on behalf of a separate process (a hook answered by the daemon), which
        would itself have read the files as they are now.
        """
        try:
            seen = self._fingerprint()
        except ConfigError as exc:
            return exc
        if seen == self._seen:
            return None
        error = self.reload()
        if error is None:
            self._seen = seen
        return error

    def _fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        paths = [self._home / GLOBAL_FILE, *_dropins(self._home)]
        if self._project_root is not None:
            paths.append(self._project_root / PROJECT_FILE)
        marks = []
        for path in paths:
            try:
                info = path.stat()
            except OSError:
                continue  # absent: the files that exist are the fingerprint
            marks.append((str(path), info.st_mtime_ns, info.st_size))
        return tuple(marks)
