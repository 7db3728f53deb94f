"""The shape of the code base: imports run one way, helpers cross modules only by public names.

Rules checked over every module of ``ratings/`` and ``sampling/``, read with :mod:`ast` (nothing
is imported):

* **No import cycles.** An edge A -> B is any ``import B`` / ``from B import ...`` in A, at the
  top or inside a function (a deferred import is a dependency all the same); only imports under
  ``if TYPE_CHECKING:`` are left out. ``from P import name`` is an edge to the submodule ``P.name``
  when there is one, else to the package ``P`` (its ``__init__``). Importing a submodule does not
  count as importing its parent package's ``__init__``.
* **Only public names cross modules.** A module may import any other module of the project,
  including an internal one whose file name starts with ``_`` (``_kernels``, ``_tdist``,
  ``_board``): the underscore says the *module* is not for users. What it takes from another
  module must be public: no ``from M import _name`` and no ``M._name`` on an imported module
  (dunders such as ``__version__`` excepted), and every name taken with ``from M import name``
  is listed in ``M.__all__`` (or is a submodule). A helper a second module needs has become
  public: it gets a name without an underscore and a place in ``__all__``.
* **``ratings`` is a library under ``sampling``**: no module of ``ratings`` imports ``sampling``
  but the command line (:mod:`ratings.cli`, the one runner, where ``ratings next`` is wired in).
* **Every module declares ``__all__``** and lists only names it defines or imports.
* **Small modules.** Every module has fewer than :data:`MAX_LINES` lines; so do the tests and
  the benchmark scripts (:data:`OTHER_CODE`).

Tests may use private names; they are not checked here.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ratings", "sampling")
MAX_LINES = 700
#: Folders of Python files held to the size rule but not to the import rules.
OTHER_CODE = ("tests", "benchmarks_perf")


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool
    imports: list[tuple[str, str | None, int]] = field(default_factory=list)  # (module, name, line)
    module_aliases: dict[str, str] = field(default_factory=dict)  # local name -> project module


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _load() -> dict[str, Module]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name, is_package = _module_name(path)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            modules[name] = Module(name, path, tree, is_package)
    return modules


MODULES = _load()


def _in_project(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the statements under ``if TYPE_CHECKING:``."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip.update(id(n) for n in ast.walk(child))
    return skip


def _collect(module: Module) -> None:
    skip = _type_checking_nodes(module.tree)
    for node in ast.walk(module.tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _in_project(alias.name):
                    module.imports.append((alias.name, None, node.lineno))
                    if alias.asname:
                        module.module_aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            if not _in_project(source):
                continue
            for alias in node.names:
                module.imports.append((source, alias.name, node.lineno))
                if f"{source}.{alias.name}" in MODULES:
                    module.module_aliases[alias.asname or alias.name] = f"{source}.{alias.name}"


for _m in MODULES.values():
    _collect(_m)


def _edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for module in MODULES.values():
        for source, name, _ in module.imports:
            target = f"{source}.{name}" if name and f"{source}.{name}" in MODULES else source
            if target in MODULES and target != module.name:
                graph[module.name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _all_names(module: Module) -> list[str] | None:
    for node in module.tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:  # computed (e.g. sorted(...) of a lazy-export table): ask it
                return list(importlib.import_module(module.name).__all__)
    return None


def _bound_names(module: Module) -> set[str]:
    """Names the module binds at its top level (definitions, assignments, imports)."""
    names = set()
    for node in module.tree.body:
        for sub in ast.walk(node) if isinstance(node, ast.Try | ast.If) else [node]:
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(sub.name)
            elif isinstance(sub, ast.Assign):
                for t in sub.targets:
                    names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                names.add(sub.target.id)
            elif isinstance(sub, ast.Import | ast.ImportFrom):
                names.update((a.asname or a.name).split(".")[0] for a in sub.names)
    return names


def test_the_import_graph_has_no_cycles():
    cycles = _cycles(_edges())
    assert not cycles, f"import cycles (strongly connected modules): {cycles}"


def test_a_cycle_would_be_found():
    # the check itself: a two-module cycle and a self-contained chain
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_only_the_command_line_of_ratings_imports_sampling():
    found = sorted({f"{m.path.relative_to(ROOT)}:{line}"
                    for m in MODULES.values() if m.name.split(".")[0] == "ratings"
                    and m.name != "ratings.cli"
                    for source, _, line in m.imports if source.split(".")[0] == "sampling"})
    assert found == []


def test_no_private_name_crosses_modules():
    found = []
    for module in MODULES.values():
        for source, name, line in module.imports:
            if name is not None and name.startswith("_") and not name.startswith("__"):
                if f"{source}.{name}" not in MODULES:  # an internal module is fine
                    found.append(f"{module.path.relative_to(ROOT)}:{line}: {name} from {source}")
        for node in ast.walk(module.tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module.module_aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):  # fmt: skip
                target = module.module_aliases[node.value.id]
                if f"{target}.{node.attr}" not in MODULES:
                    found.append(f"{module.path.relative_to(ROOT)}:{node.lineno}: "
                                 f"{node.value.id}.{node.attr} ({target})")  # fmt: skip
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_imported_names_are_in_the_source_modules_all():
    found = []
    for module in MODULES.values():
        for source, name, line in module.imports:
            if name is None or f"{source}.{name}" in MODULES or source not in MODULES:
                continue
            if name.startswith("__"):  # module dunders such as __version__
                continue
            public = _all_names(MODULES[source]) or []
            if name != "*" and name not in public:
                found.append(f"{module.path.relative_to(ROOT)}:{line}: {name} not in "
                             f"{source}.__all__")  # fmt: skip
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_declares_all_of_its_own_names(name):
    module = MODULES[name]
    public = _all_names(module)
    assert public is not None, f"{module.path.relative_to(ROOT)} has no __all__"
    bound = _bound_names(module)
    lazy = set()
    if module.is_package:  # a package may load names on first use (PEP 562 __getattr__)
        lazy = {n for n in public if n not in bound}
        if lazy:
            assert "__getattr__" in bound, f"{name}: {sorted(lazy)} are neither bound nor lazy"
    assert [n for n in public if n not in bound and n not in lazy] == []
    assert len(set(public)) == len(public)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_is_under_the_size_limit(name):
    module = MODULES[name]
    lines = module.path.read_text(encoding="utf-8").count("\n")
    assert lines < MAX_LINES, f"{module.path.relative_to(ROOT)} has {lines} lines"


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT)) for folder in OTHER_CODE
                                        for p in (ROOT / folder).rglob("*.py")))  # fmt: skip
def test_every_test_and_benchmark_file_is_under_the_size_limit(path):
    lines = (ROOT / path).read_text(encoding="utf-8").count("\n")
    assert lines < MAX_LINES, f"{path} has {lines} lines"
