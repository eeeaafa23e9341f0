"""Surfaces and integrations reach the store only through the services.

They format what the services return (``fleetmem.service.records`` and the services' own
result types); a module of theirs that imported ``fleetmem.store`` would format the store's
rows again, and a column change would reach the API, the pages and the MCP answers.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "fleetmem"
GUARDED = ("surfaces", "integrations")
FORBIDDEN = "fleetmem.store"


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute name an ``import from`` names, relative ones resolved from ``module``."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".")[: -node.level]
    return ".".join([*package, *([node.module] if node.module else [])])


def _store_imports(tree: ast.Module, module: str) -> list[str]:
    """Each import of ``tree`` (module ``module``) that reaches the store, as written."""
    found: list[str] = []
    for node in ast.walk(tree):  # every import, those inside functions included
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            # `from fleetmem import store` and `from .. import store` name the package too.
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any(n == FORBIDDEN or n.startswith(FORBIDDEN + ".") for n in names):
            found.append(ast.unparse(node))
    return found


#: What holds the store in the services' world: ``app.store``, ``self.app.store``,
#: ``app.memory.store``. A surface that reached through them would bypass the services as
#: surely as an import (``settings.store`` is configuration, and allowed).
HOLDERS = ("app", "memory")


def _store_reaches(tree: ast.Module) -> list[str]:
    """Each ``<app or memory>.store`` attribute read in ``tree``, as written."""
    found: list[str] = []
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "store"]
    for node in sorted(reads, key=lambda n: (n.lineno, n.col_offset)):
        holder = node.value
        name = (
            holder.id
            if isinstance(holder, ast.Name)
            else holder.attr
            if isinstance(holder, ast.Attribute)
            else ""
        )
        if name in HOLDERS or name.endswith("_app"):
            found.append(ast.unparse(node))
    return found


def _modules(src: Path) -> list[tuple[Path, str]]:
    """Every module of the guarded layers under ``src`` (the ``fleetmem`` package), with its
    dotted name; a package's ``__init__`` keeps it, so its relative imports resolve from the
    package itself."""
    return [
        (path, ".".join(path.relative_to(src.parent).with_suffix("").parts))
        for layer in GUARDED
        for path in sorted((src / layer).rglob("*.py"))
    ]


def _offenders(src: Path) -> list[str]:
    found: list[str] = []
    for path, module in _modules(src):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found += [f"{module}: {f}" for f in [*_store_imports(tree, module), *_store_reaches(tree)]]
    return found


def test_surfaces_and_integrations_do_not_import_the_store() -> None:
    modules = _modules(SRC)
    # Guards against a walk that finds nothing (a moved tree) passing silently.
    assert len(modules) > 50
    assert _offenders(SRC) == []


def test_the_walker_catches_each_way_of_importing_the_store(tmp_path: Path) -> None:
    src = tmp_path / "fleetmem"
    (src / "surfaces" / "web").mkdir(parents=True)
    (src / "integrations").mkdir()
    (src / "surfaces" / "fine.py").write_text(
        "from fleetmem.service.records.facts import Fact\nimport fleetmem.storage_notes\n"
        "timeout = app.settings.store.claim_timeout_s\n",
        encoding="utf-8",
    )
    (src / "surfaces" / "web" / "bad.py").write_text(
        "from fleetmem.store.facts import FactRow\n"
        "from ...store import base\n"
        "from ... import store\n"
        "def late():\n"
        "    import fleetmem.store.leases\n"
        "    return self.app.store.schema_version(), app.memory.store, web_app.store\n",
        encoding="utf-8",
    )
    (src / "integrations" / "__init__.py").write_text(
        "from fleetmem import store\nfrom ..store.runs import LiveRunRow\n", encoding="utf-8"
    )
    assert _offenders(src) == [
        "fleetmem.surfaces.web.bad: from fleetmem.store.facts import FactRow",
        "fleetmem.surfaces.web.bad: from ...store import base",
        "fleetmem.surfaces.web.bad: from ... import store",
        "fleetmem.surfaces.web.bad: import fleetmem.store.leases",
        "fleetmem.surfaces.web.bad: self.app.store",
        "fleetmem.surfaces.web.bad: app.memory.store",
        "fleetmem.surfaces.web.bad: web_app.store",
        "fleetmem.integrations.__init__: from fleetmem import store",
        "fleetmem.integrations.__init__: from ..store.runs import LiveRunRow",
    ]
