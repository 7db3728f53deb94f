"""The shape of the code base: parts in layers, imports one way, public names across modules.

Rules checked over every module of ``ratings/`` and ``sampling/``, read with :mod:`ast` (nothing
is imported). Every import counts: at the top, inside a function, or under
``if TYPE_CHECKING:`` (a type a module names is a dependency all the same).

* **Parts in layers.** :data:`LAYERS` declares the parts of ``ratings`` (its subpackages and
  top-level modules) and the parts each may import; an import of any other part is an upward
  (or sideways) import and fails. A part's own modules import each other freely.
* **No import cycles** between modules. An edge A -> B is any ``import B`` / ``from B import
  ...`` in A. ``from P import name`` is an edge to the submodule ``P.name`` when there is one,
  else to the package ``P`` (its ``__init__``). Importing a submodule does not count as
  importing its parent package's ``__init__``.
* **Only public names cross modules.** A module may import any other module of the project,
  including an internal one whose file name starts with ``_``. What it takes from another
  module must be public: no ``from M import _name`` and no ``M._name`` on an imported module
  (dunders such as ``__version__`` excepted), and every name taken with ``from M import name``
  is listed in ``M.__all__`` (or is a submodule).
* **``ratings`` never imports ``sampling``**; ``sampling`` registers its ``next`` subcommand
  (:mod:`ratings.cli.commands`), and is a part of :data:`LAYERS` itself: it imports only the
  public API (the package ``ratings``) and the kit (:mod:`ratings.kit`).
* **No hidden imports.** ``importlib.import_module`` and ``__import__`` of a project module
  named by a string are edges like any import, and fail: a module imports what it uses. A
  computed name is allowed only in :data:`DYNAMIC_IMPORTS` (lazy exports, the subcommands'
  discovery, the old module paths), and the names a package exports lazily
  (``lazy_exports(__name__, {...})``) are edges to the modules named.
* **Every module declares ``__all__``** and lists only names it defines or imports.
* **Few top-level modules**: at most :data:`MAX_TOP_LEVEL` modules directly in ``ratings/``.

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
MAX_TOP_LEVEL = 8

#: The parts of ``ratings``, bottom to top, and the parts each may import. A part is a
#: subpackage (``ratings.core``) or a top-level module (``ratings.result``); ``ratings`` is the
#: package's own ``__init__``.
LAYERS: dict[str, set[str]] = {
    "core": set(),
    "io": {"core"},
    "kernels": {"core"},
    "data": {"core", "io", "kernels"},
    "inference": {"core", "data", "kernels"},
    "models": {"core", "data", "kernels", "inference"},
    "result": {"core", "inference", "models"},
    "api": {"core", "io", "kernels", "data", "inference", "models", "result"},
    "features": {"core"},
    "scopes": {"core", "io", "kernels", "data", "inference", "models", "result", "api"},
    "datasets": {"core", "io", "result", "api", "scopes"},
    "audit": {"core", "io", "kernels", "data", "inference", "models", "result", "api", "scopes"},
    "plot": {"core", "io", "result", "scopes", "audit"},
    "stability": {"core", "io", "kernels", "data", "inference", "models", "result", "api",
                  "scopes", "plot"},
    "report": {"core", "io", "kernels", "data", "inference", "models", "result", "api", "scopes",
               "audit", "plot", "stability"},
    "_moved": {"core"},
    "ratings": {"core", "io", "data", "result", "api", "audit", "_moved", "features", "report",
                "stability"},
    "cli": {"core", "io", "kernels", "data", "inference", "models", "result", "api", "scopes",
            "audit", "plot", "report", "datasets", "ratings", "features", "stability"},
    "kit": {"core", "io", "kernels", "models", "api", "datasets", "_moved", "cli"},
    # beside ratings: its public API and the kit, then its own parts
    "sampling.board": {"ratings", "kit"},
    "sampling.judges": {"ratings", "kit", "sampling.board"},
    "sampling.picks": {"ratings", "kit", "sampling.board", "sampling.judges"},
    "sampling.design": {"ratings", "kit", "sampling.board", "sampling.judges", "sampling.picks"},
    "sampling": {"ratings", "kit", "sampling.board", "sampling.judges", "sampling.picks",
                 "sampling.design"},
}

#: What each part owns, for the parts table of docs/architecture.md (written with :data:`LAYERS`
#: by :func:`parts_table`; ``python tests/test_architecture.py`` rewrites it).
OWNS: dict[str, str] = {
    "core": "errors and warnings, the column schema (and `ELO_SCALE`), the aggregated-row layout "
            "(`rows`), numeric bounds, the memory guard, t quantiles, dense linear algebra, the "
            "thread pool, the version, lazy exports and deprecated names",
    "io": "readers, verdict validation, the cell/column toolkit, the one atomic writer",
    "kernels": "numba kernels, their NumPy twins, the engine choice, whether a kernel is cached",
    "data": "`Comparisons` (aggregation into sufficient statistics), counts, slots, the Dask "
            "reduction",
    "inference": "covariances (sandwich, model-based, bootstrap), CR2 and Satterthwaite df, rank "
                 "intervals and the pairwise table from plain arrays",
    "models": "BT, Firth, Newton, existence and separation, judge effects, style control; "
              "`models/crowd/` all of Crowd-BT (likelihood, prior, one-judge widening, judges "
              "table, judge-quality files)",
    "result": "`Ratings`: a core and typed parts (`Uncertainty`, `FitInfo`, `JudgeEffects`, "
              "`Combination`, Crowd-BT's `CrowdSummary`, the style coefficients, `Placement`); "
              "the HTML renderers and the fragility analysis registered from above "
              "(`register_html`, `register_fragility`)",
    "api": "`fit` and its typed specs (`BT`, `CrowdBT`, `Bootstrap`, `Read`, `Adjust`, `Solver`, "
           "`Style`; `specs.options_of` checks them once), reading a log for a fit (`loading`), "
           "judge-effect adjustment, the style fit, the kernels' warm-up, 0.1.0's names (`compat`)",
    "features": "answer-style features counted from answer texts (tokens, headers, lists, bold)",
    "scopes": "rubric matches, per-scope fits and the combined headline, scales, the frozen "
              "index registry, writing judge-quality files, one judge per check",
    "datasets": "the bundled simulated example (`example`, files in `examples/`) and verdicts "
                "drawn from known strengths (`simulate`)",
    "audit": "the judge audit (position bias, self-preference, agreement)",
    "plot": "the figures, and a saved table drawn (`plot_table`)",
    "stability": "new models placed against a frozen board (two-step intervals), drift between "
                 "two boards (and its chart), the fragility of a board's order; the board file "
                 "and its covariance file",
    "report": "the leaderboard page (`to_html`, `ratings report`): its contents, charts and "
              "templates",
    "_moved": "module paths of earlier releases, as proxies that warn",
    "ratings": "the package's public API (`ratings.fit`, `ratings.place`, `ratings.Ratings`, "
               "...)",
    "cli": "the runner (`app`), one module per subcommand (`commands/`), the kit they are built "
           "with (`kit`), flags, notes, the allocator settings of a run",
    "kit": "the building blocks for packages built on ratings (`sampling`'s only door besides "
           "the public API)",
    "sampling.board": "planning inputs and counts: board, history, submissions, matches per "
                      "(pair, task), feasible pairs",
    "sampling.judges": "routing and the judge of each match (`assign`, its compiled repair "
                       "`assign_numba`)",
    "sampling.picks": "the active phase's picks: criteria, `picker` and its compiled twin "
                      "`picker_numba`, PCG64 in numba (`pcg64_numba`), whether the compiled loops "
                      "are ready (`compiled`)",
    "sampling.design": "`plan_matches` and its rules, several scopes, balance checks, the "
                       "oracle design, simulated campaigns",
    "sampling": "match planning beside `ratings/`: the public names and `ratings next` (`cli`, "
                "registered through the entry points), compiling the loops ahead (`warmup`)",
}


def _part_label(part: str) -> str:
    if part.startswith("sampling"):
        return "`" + part.replace(".", "/") + "/`" + (" (`__init__`, `cli.py`)"
                                                      if part == "sampling" else "")
    if part == "ratings":
        return "`__init__.py`"
    return f"`{part}/`" if (ROOT / "ratings" / part).is_dir() else f"`{part}.py`"


def parts_table() -> str:
    """The parts table of docs/architecture.md: every part of :data:`LAYERS`, bottom to top,
    with what it owns (:data:`OWNS`) and the parts it may import."""
    lines = ["| part | owns | may import |", "| --- | --- | --- |"]
    order = list(LAYERS)
    for part in order:
        allowed = LAYERS[part]
        if not allowed:
            may = "nothing of ratings"
        else:
            may = ", ".join(p if p != "ratings" else "the public API" for p in order
                            if p in allowed)  # fmt: skip
        lines.append(f"| {_part_label(part)} | {OWNS[part]} | {may} |")
    return "\n".join(lines) + "\n"


DOC = ROOT / "docs" / "architecture.md"
_TABLE_START = "<!-- parts table: written from tests/test_architecture.py (LAYERS, OWNS) -->\n"
_TABLE_END = "<!-- end of the parts table -->\n"


def _doc_with_table(text: str) -> str:
    head, rest = text.split(_TABLE_START, 1)
    return head + _TABLE_START + parts_table() + _TABLE_END + rest.split(_TABLE_END, 1)[1]


#: Modules that may import a module whose name is computed, and why.
DYNAMIC_IMPORTS = {
    "ratings.core.lazy": "a package's lazy exports (the modules named are edges, see _lazy)",
    "ratings.cli.commands": "the subcommands are the package's modules, found by name",
    "ratings._moved": "old module paths lead to the new modules (MOVED)",
}


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool
    imports: list[tuple[str, str | None, int]] = field(default_factory=list)  # (module, name, line)
    module_aliases: dict[str, str] = field(default_factory=dict)  # local name -> project module
    hidden: list[str] = field(default_factory=list)  # importlib / __import__ calls that fail


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


def _collect(module: Module) -> None:
    for node in ast.walk(module.tree):
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
        elif isinstance(node, ast.Call):
            _dynamic(module, node)


def _called(node: ast.Call) -> str:
    """``import_module`` / ``importlib.import_module`` / ``__import__`` / ``lazy_exports``
    (the name called), or ''."""
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name if name in ("import_module", "__import__", "lazy_exports") else ""


def _strings(node: ast.expr) -> list[str]:
    """The string constants of a literal (a string, a dict's values, ``dict.fromkeys(k, v)``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Dict):
        return [v for value in node.values for v in _strings(value)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "fromkeys" and len(node.args) == 2:  # fmt: skip
        return _strings(node.args[1])
    return []


def _dynamic(module: Module, node: ast.Call) -> None:
    """Record a call importing by name: an edge to a module named by a literal of a lazy export;
    a failure for a project module named by a string, or a computed name outside
    :data:`DYNAMIC_IMPORTS`."""
    called = _called(node)
    if not called or not node.args:
        return
    if called == "lazy_exports":  # lazy_exports(__name__, {name: "module", ...})
        homes = node.args[1] if len(node.args) > 1 else ast.Constant(None)
        if isinstance(homes, ast.Name):  # a table assigned at the top of the module
            homes = next((n.value for n in module.tree.body if isinstance(n, ast.Assign)
                          and any(isinstance(t, ast.Name) and t.id == homes.id
                                  for t in n.targets)), homes)  # fmt: skip
        for target in _strings(homes):
            if _in_project(target):
                module.imports.append((target, None, node.lineno))
        return
    where = f"{module.path.relative_to(ROOT)}:{node.lineno}"
    named = _strings(node.args[0])
    if not named:
        if module.name not in DYNAMIC_IMPORTS:
            module.hidden.append(f"{where}: {called}() of a computed name")
        return
    for target in named:
        if _in_project(target):
            module.imports.append((target, None, node.lineno))
            module.hidden.append(f"{where}: {called}({target!r})")


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


def _part(name: str) -> str | None:
    """The part a module belongs to: of ``ratings`` (its subpackage or top-level module, or
    ``ratings`` for the package's ``__init__``), or ``sampling``."""
    bits = name.split(".")
    if bits[0] == "sampling":  # a subpackage of sampling, or its own modules
        return ".".join(bits[:2]) if (ROOT / "sampling" / [*bits, ""][1]).is_dir() \
            and len(bits) > 1 else "sampling"  # fmt: skip
    if bits[0] != "ratings":
        return None
    return "ratings" if len(bits) == 1 else bits[1]


def _upward(graph: dict[str, set[str]], layers: dict[str, set[str]]) -> list[str]:
    """Every edge from one part to a part it may not import."""
    found = []
    for source, targets in graph.items():
        a = _part(source)
        for target in sorted(targets):
            b = _part(target)
            if a is None or b is None or a == b:
                continue
            if b not in layers.get(a, set()):
                found.append(f"{source} -> {target} ({a} may not import {b})")
    return found


def test_every_part_is_declared():
    parts = {_part(name) for name in MODULES} - {None}
    assert parts == set(LAYERS), f"undeclared: {parts - set(LAYERS)}, gone: {set(LAYERS) - parts}"


def test_parts_import_only_the_parts_below_them():
    found = _upward(_edges(), LAYERS)
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_the_layers_are_ordered():
    # the declaration itself has no circle: each part imports only parts declared before it
    order = list(LAYERS)
    for k, part in enumerate(order):
        assert LAYERS[part] <= set(order[:k]), part


def test_an_upward_import_would_be_found():
    graph = {"ratings.core.schema": {"ratings.models.bt"}, "ratings.models.bt": set(),
             "ratings.result": {"ratings.core.schema"}}  # fmt: skip
    assert _upward(graph, LAYERS) == [
        "ratings.core.schema -> ratings.models.bt (core may not import models)"]


def test_no_module_imports_by_a_hidden_name():
    found = [h for m in MODULES.values() for h in m.hidden]
    assert not found, "imports the layers test would not see as imports:\n" + "\n".join(found)


def _parsed(name: str, source: str) -> Module:
    module = Module(name, ROOT / (name.replace(".", "/") + ".py"), ast.parse(source), False)
    _collect(module)
    return module


def test_a_hidden_import_would_be_found():
    # the check itself: import_module / __import__ on a project module's name fail, and are
    # edges (so that the layers and the cycle check see them); a computed name fails outside
    # the allowed modules; lazy exports are edges and pass
    module = _parsed("ratings.result", "import importlib\n"
                     "def page():\n    return importlib.import_module('ratings.report')\n")
    assert module.hidden == ["ratings/result.py:3: import_module('ratings.report')"]
    assert ("ratings.report", None, 3) in module.imports
    graph = {"ratings.result": {"ratings.report"}}
    assert _upward(graph, LAYERS) == [
        "ratings.result -> ratings.report (result may not import report)"]
    module = _parsed("ratings.scopes.x", "from importlib import import_module as im\n"
                     "import_module = im\nm = __import__('sampling.design.plan')\n")
    assert module.hidden == ["ratings/scopes/x.py:3: __import__('sampling.design.plan')"]
    module = _parsed("ratings.plot.x", "import importlib\nn = 'ratings.' + 'cli'\n"
                     "importlib.import_module(n)\n")
    assert module.hidden == ["ratings/plot/x.py:3: import_module() of a computed name"]
    module = _parsed("ratings.plot", "__getattr__ = lazy_exports(__name__, "
                     "dict.fromkeys(['a'], 'ratings.plot.bands'))\n")
    assert module.hidden == [] and module.imports == [("ratings.plot.bands", None, 1)]
    assert _parsed("ratings.x", "import importlib\nimportlib.import_module('numpy')\n"
                   ).hidden == []  # fmt: skip


def test_sampling_uses_only_the_public_api_and_the_kit():
    found = sorted(f"{m.path.relative_to(ROOT)}:{line}: {source}"
                   for m in MODULES.values() if m.name.split(".")[0] == "sampling"
                   for source, _, line in m.imports
                   if source.split(".")[0] == "ratings"
                   and source not in ("ratings", "ratings.kit"))  # fmt: skip
    assert found == []


def test_ratings_never_imports_sampling():
    found = sorted({f"{m.path.relative_to(ROOT)}:{line}"
                    for m in MODULES.values() if m.name.split(".")[0] == "ratings"
                    for source, _, line in m.imports if source.split(".")[0] == "sampling"})
    assert found == []


def test_few_modules_at_the_top_of_ratings():
    top = sorted(p.name for p in (ROOT / "ratings").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, top


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


# --- One model core: one solver, one inference builder -----------------------------------------

#: Where the Newton solver and the sandwich assembly live; every other fit calls them.
CORE_PARTS = ("ratings/models", "ratings/api", "ratings/scopes")
SOLVER = "ratings/models/newton.py"
#: Functions that assemble a sandwich; only the inference builder and ``inference`` call them.
SANDWICH_CALLS = {"gram", "cluster_sandwich", "bread_meat_bread", "sandwich"}


def _core_findings(tree: ast.AST, where: str) -> list[str]:
    """Tell-tales of a Newton loop or a sandwich assembly of its own in ``tree``: step halving
    (``t *= 0.5``), a function called ``newton``, ``b @ ... @ b`` with the same bread on both
    sides, the CR1 factor ``g / (g - 1)``, or a call of a sandwich function."""

    def name(node: ast.AST) -> str | None:
        return node.id if isinstance(node, ast.Name) else None

    def ends(node: ast.AST, side: str) -> ast.AST:
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            node = node.left if side == "left" else node.right
        return node

    found = []
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', '?')}"
        if (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Mult)
                and isinstance(node.value, ast.Constant) and node.value.value == 0.5):
            found.append(f"{line}: step halving (a Newton loop)")
        elif isinstance(node, ast.FunctionDef) and node.name == "newton":
            found.append(f"{line}: a function `newton`")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            left, right = name(ends(node, "left")), name(ends(node, "right"))
            if (left is not None and left == right and isinstance(node.left, ast.BinOp)
                    and isinstance(node.left.op, ast.MatMult)):
                found.append(f"{line}: `{left} @ ... @ {left}` (a sandwich)")
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
              and isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Sub)
              and name(node.left) is not None and name(node.left) == name(node.right.left)
              and isinstance(node.right.right, ast.Constant) and node.right.right.value == 1):
            found.append(f"{line}: the CR1 factor `{name(node.left)} / ({name(node.left)} - 1)`")
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            if called in SANDWICH_CALLS:
                found.append(f"{line}: calls `{called}` (a sandwich assembly)")
    return found


def test_one_solver_and_one_inference_builder():
    """No Newton loop but :func:`ratings.models.newton.newton` and no sandwich assembled but by
    :mod:`ratings.inference.builder` in ``models/``, ``api/`` or ``scopes/``."""
    found = []
    for part in CORE_PARTS:
        for path in sorted((ROOT / part).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found += [f for f in _core_findings(tree, where)
                      if not (where == SOLVER and ("step halving" in f or "`newton`" in f))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("source", [
    "def fit(x):\n    t = 1.0\n    while f(x - t) > f(x):\n        t *= 0.5\n",
    "def newton(fun, x):\n    return x\n",
    "cov = bread @ meat @ bread\n",
    "cov = (g / (g - 1)) * m\n",
    "from ratings.inference.covariance import gram\ncov = gram(influence, 2.0)\n",
])  # fmt: skip
def test_a_second_solver_or_sandwich_would_be_found(source):
    assert _core_findings(ast.parse(source), "x.py")


def test_every_part_says_what_it_owns():
    assert set(OWNS) == set(LAYERS)


def test_the_parts_table_of_the_architecture_notes_is_written_from_the_layers():
    text = DOC.read_text(encoding="utf-8")
    assert _TABLE_START in text and _TABLE_END in text
    assert text == _doc_with_table(text), "run `python tests/test_architecture.py`"


if __name__ == "__main__":  # rewrite the parts table of docs/architecture.md
    DOC.write_text(_doc_with_table(DOC.read_text(encoding="utf-8")), encoding="utf-8")
