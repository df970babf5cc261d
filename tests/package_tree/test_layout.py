"""The package tree's shape: no import circles, and layering that runs one way.

Read from the source with ``ast`` (nothing is imported): every ``import`` and ``from ...
import`` statement counts, at module level or inside a function, and so does a call
importing a literal name (``importlib.import_module("a.b")``, ``import_module("a.b")``,
``__import__("a.b")``). An edge goes to the module named, or to the
submodule when ``from package import submodule``; a package's ``__init__`` that Python runs
on the way is not an edge (it holds docstrings, not code the importer uses).

- No circle of any length, anywhere in statbench (core, built-in models, tasks, site).
- The core (``harness/``) never imports the built-in models, the tasks, the site, nor the
  plugin author's surface (``statbench.api``, ``statbench.testing``): those sit on top of it.
- Within the core, a subpackage imports only from the subpackages listed before it in
  ``statbench``'s package docstring (the layer order, bottom up), but for the known debt
  listed in ``LAYERING_DEBT``, which may only shrink.
- The wings keep one order over the core (``WING_IMPORTS``): core < the plugin author's
  surface (``statbench.api``, ``statbench.testing``) < {built-in models, tasks} < site. The
  models and the tasks never import each other (each registers as a third party's would),
  and the site (``statbench.leaderboard``) never imports the models (it reads their results;
  the tasks' loaders and names it may use). No exceptions.
- pyproject's package list is exactly the tree's packages (a missing one would be left out
  of the wheel).
- In the packages of ``TOP_IMPORTS``, statbench's modules are imported at the top of a module:
  inside a function only in a click command's body or with its reason in ``INSIDE`` (which may
  only shrink).
- The tests are laid out like the package: no test file at the top of tests/, each test folder
  names a package of the tree (or is one of ``OTHER_TEST_FOLDERS``), base names unique.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT

#: What sits on top of the core: the core never imports these (nor their submodules).
ABOVE_THE_CORE = ("statbench.models", "statbench.tasks", "statbench.leaderboard", "statbench.api",
                  "statbench.testing")


# --- the tree ---------------------------------------------------------------------------------


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """Import name -> folder, from pyproject's ``package-dir``."""
    config = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    return {name: root / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def module_files(dirs: dict[str, Path]) -> dict[str, Path]:
    """Every module's dotted name -> its file. A folder mapped to its own name (statbench.models
    = plugins/builtin) wins over the same folder reached through a parent's mapping."""
    modules: dict[str, Path] = {}
    for package, folder in sorted(dirs.items(), key=lambda item: -len(item[0])):
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if any(not re.fullmatch(r"\w+", part) for part in parts):
                continue  # not importable (a folder such as statbench-plugin-example)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules.setdefault(".".join([package, *parts]), path)
    return modules


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The known modules that module ``name`` (file ``path``) imports, anywhere in it."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                found.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module)
        elif literal_import(node) is not None:
            found.add(literal_import(node))
    return {module for module in found if module in known and module != name}


def literal_import(node: ast.AST) -> str | None:
    """The module a call imports by a literal name: ``importlib.import_module("a.b")``,
    ``import_module("a.b")`` (imported from importlib), ``__import__("a.b")``; else ``None``."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return node.args[0].value if name in ("import_module", "__import__") else None


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = module_files(package_dirs(root))
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


# --- circles ----------------------------------------------------------------------------------


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(start: str) -> None:  # iterative: the tree is deep enough for recursion limits to matter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def a_circle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete circle through a component's first module: ``[a, b, ..., a]``."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:  # breadth first: the shortest circle back to start
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no circle in component {component}")


def circles(graph: dict[str, set[str]]) -> list[str]:
    return [" -> ".join(a_circle(graph, component)) + f"  (component of {len(component)}: {', '.join(component)})"
            for component in strongly_connected(graph)]


# --- layering ---------------------------------------------------------------------------------


def is_core(module: str) -> bool:
    return module == "statbench" or (module.startswith("statbench.") and not module.startswith(ABOVE_THE_CORE))


def imports_above_the_core(graph: dict[str, set[str]]) -> list[str]:
    return [f"{module} -> {target}" for module in sorted(graph) if is_core(module)
            for target in sorted(graph[module]) if not is_core(target)]


def layer_order(root: Path = ROOT) -> list[str]:
    """The core's subpackages bottom up, as statbench's package docstring lists them
    (``- :mod:`statbench.errors`: ...``)."""
    init = package_dirs(root)["statbench"] / "__init__.py"
    docstring = ast.get_docstring(ast.parse(init.read_text("utf-8"))) or ""
    return re.findall(r"^- :mod:`statbench\.(\w+)`", docstring, flags=re.MULTILINE)


def layer_of(module: str, order: list[str]) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in order else None


def upward_imports(graph: dict[str, set[str]], order: list[str]) -> list[str]:
    """Imports from a core subpackage into one listed after it (a higher layer)."""
    found = []
    for module in sorted(graph):
        low = layer_of(module, order)
        if low is None:
            continue
        for target in sorted(graph[module]):
            high = layer_of(target, order)
            if high is not None and order.index(high) > order.index(low):
                found.append(f"{module} -> {target} ({low} is below {high})")
    return found


#: The wings, each a package (with its subpackages) of the tree; any other statbench module is the core.
WINGS = {"statbench.api": "surface", "statbench.testing": "surface", "statbench.models": "models",
         "statbench.tasks": "tasks", "statbench.leaderboard": "site"}

#: wing -> the wings its modules may import (its own included): core < surface < {models, tasks} < site,
#: the models and the tasks beside each other, the site above the tasks but never the models.
WING_IMPORTS = {
    "core": {"core"},
    "surface": {"core", "surface"},
    "models": {"core", "surface", "models"},
    "tasks": {"core", "surface", "tasks"},
    "site": {"core", "surface", "tasks", "site"},
}


def wing_of(module: str) -> str:
    return next((wing for package, wing in WINGS.items() if module == package or module.startswith(package + ".")),
                "core")


def imports_across_the_wings(graph: dict[str, set[str]]) -> list[str]:
    """Imports from one wing into a wing its place in ``WING_IMPORTS`` does not allow."""
    return [f"{module} -> {target} ({wing_of(module)} may not import {wing_of(target)})"
            for module in sorted(graph) for target in sorted(graph[module])
            if wing_of(target) not in WING_IMPORTS[wing_of(module)]]


# --- the tests --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_walk_sees_the_whole_tree(graph):
    assert {"statbench.api", "statbench.run.runner", "statbench.models.lexical.bm25", "statbench.tasks.stard",
            "statbench.leaderboard.render.build", "statbench.scoring.measures"} <= set(graph)
    assert "statbench.contract.records" in graph["statbench.api"]
    # an import inside a function counts: the core's commands import the runner lazily
    assert any(target.startswith("statbench.run.") for target in graph["statbench.commands.cli"])


def test_no_import_circle(graph):
    found = circles(graph)
    assert not found, "import circles (break each by moving the shared piece down, or passing it in):\n" + \
        "\n".join(found)


def test_the_core_never_imports_what_sits_on_it(graph):
    found = imports_above_the_core(graph)
    assert not found, ("the core (harness/) imports the built-ins, tasks, site or plugin surface "
                       f"({', '.join(ABOVE_THE_CORE)}):\n" + "\n".join(found))


def test_the_wings_import_only_what_sits_below_them(graph):
    assert set(WINGS) == set(ABOVE_THE_CORE) and set(WINGS.values()) | {"core"} == set(WING_IMPORTS)
    found = imports_across_the_wings(graph)
    assert not found, ("a wing imports one it may not (core < api/testing < {models, tasks} < leaderboard; models "
                       "and tasks never import each other, the leaderboard never the models): move the shared piece "
                       "down (into the core, exported from statbench.api where a model needs it):\n" + "\n".join(found))


#: Upward imports allowed between core layers: none (issue 25 moved atomic writes into data,
#: weight recipes into storage and publishability into scoring to get there). Never add one:
#: move the shared piece down instead.
LAYERING_DEBT: set[str] = set()


def test_core_layers_import_only_downwards(graph):
    order = layer_order()
    assert order[:3] == ["errors", "contract", "data"] and "commands" in order
    packages = {name.split(".")[1] for name in package_dirs() if name.count(".") == 1 and is_core(name)}
    assert packages <= set(order), f"core subpackages missing from statbench's docstring: {sorted(packages - set(order))}"
    found = [edge for edge in upward_imports(graph, order) if edge.split(" (")[0] not in LAYERING_DEBT]
    assert not found, "a core layer imports a layer above it (statbench/__init__.py lists them bottom up):\n" + \
        "\n".join(found)


def test_pyproject_lists_every_package():
    dirs = package_dirs()
    tree = {name for name, path in module_files(dirs).items() if path.name == "__init__.py"}
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert set(config["tool"]["setuptools"]["packages"]) == tree


# --- the checks themselves can fail -------------------------------------------------------------


def _write_tree(root: Path, files: dict[str, str]) -> None:
    (root / "pyproject.toml").write_text('[tool.setuptools]\npackage-dir = { "statbench" = "core", '
                                         '"statbench.models" = "models" }\npackages = []\n')
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    _write_tree(tmp_path, {
        "core/__init__.py": '"""- :mod:`statbench.low`: x\n- :mod:`statbench.high`: y\n"""\n',
        "core/low/__init__.py": "",
        "core/low/a.py": "from statbench.high import b\n",
        "core/high/__init__.py": "",
        "core/high/b.py": "def f():\n    from ..low.c import thing\n",
        "core/low/c.py": "import importlib\nimportlib.import_module('statbench.low.a')\n",
        "core/low/d.py": "from statbench.low import a\n",
        "models/__init__.py": "",
        "models/m.py": "from statbench.low import d\n",
    })
    graph = import_graph(tmp_path)
    assert graph["statbench.high.b"] == {"statbench.low.c"}
    found = circles(graph)
    assert len(found) == 1 and found[0].startswith("statbench.high.b -> statbench.low.c -> statbench.low.a -> "
                                                   "statbench.high.b")
    assert upward_imports(graph, layer_order(tmp_path)) == [
        "statbench.low.a -> statbench.high.b (low is below high)"]
    assert imports_above_the_core(graph) == []


def test_a_core_import_of_a_model_is_found(tmp_path):
    _write_tree(tmp_path, {"core/__init__.py": "", "core/x.py": "def f():\n    import statbench.models.m\n",
                           "models/__init__.py": "", "models/m.py": "from statbench import x\n"})
    graph = import_graph(tmp_path)
    assert imports_above_the_core(graph) == ["statbench.x -> statbench.models.m"]
    assert circles(graph) == [("statbench.models.m -> statbench.x -> statbench.models.m  "
                               "(component of 2: statbench.models.m, statbench.x)")]


def test_an_import_across_the_wings_is_found(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackage-dir = { "statbench" = "core", "statbench.models" = "models", '
        '"statbench.tasks" = "tasks", "statbench.leaderboard" = "site" }\npackages = []\n')
    for name, text in {
        "core/__init__.py": "", "core/x.py": "X = 1\n", "core/api.py": "from statbench import x\n",
        "core/testing.py": "from statbench.api import X\n",
        "models/__init__.py": "", "models/m.py": "from statbench.api import X\nfrom statbench.models import n\n",
        "models/n.py": "def f():\n    from statbench.tasks.t import T\n",
        "tasks/__init__.py": "", "tasks/t.py": "import statbench.models\nfrom statbench import api, x\n",
        "tasks/u.py": "from statbench.tasks import t\n",
        "site/__init__.py": "", "site/s.py": "from statbench.tasks import t\nfrom statbench.testing import X\n",
        "site/r.py": "import importlib\nimportlib.import_module('statbench.models.m')\n",
        "site/q.py": "from importlib import import_module\n\ndef f():\n    return import_module('statbench.models')\n",
        "site/p.py": "M = __import__('statbench.models.n')\n",
        "core/low.py": "def g():\n    import statbench.leaderboard.s\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert imports_across_the_wings(import_graph(tmp_path)) == [
        "statbench.leaderboard.p -> statbench.models.n (site may not import models)",
        "statbench.leaderboard.q -> statbench.models (site may not import models)",
        "statbench.leaderboard.r -> statbench.models.m (site may not import models)",
        "statbench.low -> statbench.leaderboard.s (core may not import site)",
        "statbench.models.n -> statbench.tasks.t (models may not import tasks)",
        "statbench.tasks.t -> statbench.models (tasks may not import models)",
    ]


# --- imports at the top of a module ---------------------------------------------------------------

#: Where statbench's own modules are imported at module level (issue 35 §4), each package with
#: its subpackages. Inside a function only: a command body's (a click command function imports
#: what only the command needs: `statbench --help` loads every command module), and ``INSIDE``.
TOP_IMPORTS = ("statbench.commands", "statbench.contract", "statbench.data", "statbench.errors", "statbench.grid",
               "statbench.leaderboard", "statbench.loading", "statbench.models", "statbench.registry",
               "statbench.results", "statbench.run", "statbench.scoring", "statbench.storage", "statbench.terminal",
               "statbench.testing")

_HELP = "`statbench --help` imports every plugin module, and this keeps the import out of it"
#: the leaderboard's export command and its work share a module that `statbench --help` imports
#: (the leaderboard's command group registers it): the work's imports wait for the command
_EXPORT_COMMAND = "export.paper holds the `leaderboard export` command, which " + _HELP
#: modules handed over mid-session (session 33, issue 35 §4): their owner moves these to the top
_PENDING = "not yet moved to the top (handed over in session 33: export/**)"

#: (module, statbench module it imports inside a function) -> why that import cannot be at the top.
INSIDE: dict[tuple[str, str], str] = {
    ("statbench.grid.executors", "statbench.grid.slurm_task"): "slurm_task imports submitit (an optional extra)",
    ("statbench.commands.cli", "statbench.run.request"): "_request_of is part of the run command's body: " + _HELP,
    ("statbench.loading.taskdef", "statbench.data.download"):
        "data.download imports urllib.request, http.client and ssl (about 14 ms), needed only when a file is "
        "fetched; " + _HELP,
    ("statbench.models.lexical.analysis", "statbench.models.lexical.analysis_worker"):
        "analysis_worker imports numpy; " + _HELP,
    ("statbench.models.fusion.plugin", "statbench.models.fusion.retriever"):
        "the retriever brings the run machinery (run request, split runs, run cache); " + _HELP,
    ("statbench.leaderboard.export.paper", "statbench.commands.compare"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.commands.table_formats"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.errors"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.collect.reading"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.ranking.board_tests"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.render.admitted"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.render.board_info"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.render.build"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.render.rows"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.render.task_page"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.repo.submission"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.reproduce.verdicts"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.leaderboard.verify.levels"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.paper", "statbench.scoring.significance"): _EXPORT_COMMAND,
    ("statbench.leaderboard.export.overview", "statbench.commands.table_formats"): _PENDING,
}


def _is_command(node: ast.AST) -> bool:
    """A function decorated ``@click.command(...)``, ``@click.group(...)``, ``@group.command(...)``."""
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr in ("command", "group"):
            return True
    return False


def imports_inside_functions(name: str, path: Path, known: set[str]) -> list[tuple[int, str, bool]]:
    """``(line, statbench module, in a command body)`` for each import of a statbench module
    inside a function of module ``name`` (relative imports resolved, ``from package import
    submodule`` naming the submodule, ``importlib.import_module("statbench...")`` included)."""
    is_package = path.name == "__init__.py"
    found: list[tuple[int, str, bool]] = []

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                module = ".".join(base[:len(base) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            return [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module for alias in node.names]
        module = literal_import(node)
        return [module] if module is not None else []

    def walk(node: ast.AST, in_function: bool, in_command: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function:
                for module in targets(child):
                    if module == "statbench" or module.startswith("statbench."):
                        found.append((child.lineno, module, in_command))
            is_function = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            walk(child, in_function or is_function, in_command or (is_function and _is_command(child)))

    walk(ast.parse(path.read_text("utf-8"), filename=str(path)), False, False)
    return found


def imports_not_at_the_top(root: Path = ROOT, packages: tuple[str, ...] = TOP_IMPORTS,
                           allowed: dict[tuple[str, str], str] | None = None) -> tuple[list[str], set]:
    """The in-function imports of statbench modules in ``packages`` that are neither in a
    command body nor ``allowed`` (``file:line: module imports target``), and the allowed
    pairs that were seen."""
    allowed = INSIDE if allowed is None else allowed
    modules = module_files(package_dirs(root))
    known = set(modules)
    found, seen = [], set()
    for name, path in sorted(modules.items()):
        if not any(name == package or name.startswith(package + ".") for package in packages):
            continue
        for line, target, in_command in imports_inside_functions(name, path, known):
            if (name, target) in allowed:
                seen.add((name, target))
            elif not in_command:
                found.append(f"{path.relative_to(root)}:{line}: {name} imports {target} inside a function")
    return found, seen


def test_statbench_modules_are_imported_at_the_top():
    found, _ = imports_not_at_the_top()
    assert not found, ("import these at the top of the module (inside a function only in a command body, or with "
                       "its reason in INSIDE: an import circle, a heavy or optional library, `statbench --help`):\n"
                       + "\n".join(found))


def test_every_allowed_inside_import_is_still_there():
    _, seen = imports_not_at_the_top()
    stale = sorted(set(INSIDE) - seen)
    assert not stale, f"no longer imported inside a function, drop from INSIDE: {stale}"


def test_an_import_inside_a_function_is_found_unless_in_a_command_body_or_allowed(tmp_path):
    _write_tree(tmp_path, {
        "core/__init__.py": "",
        "core/low/__init__.py": "",
        "core/low/a.py": "X = 1\n",
        "core/low/b.py": "import importlib\n\ndef f():\n    importlib.import_module('statbench.low.a')\n",
        "core/high/__init__.py": "",
        "core/high/c.py": ("import click\nfrom statbench.low import a\n\n"
                           "class K:\n    def m(self):\n        from ..low import b\n\n"
                           "@click.command()\ndef cmd():\n    from statbench.low.a import X\n    import json\n\n"
                           "def g():\n    def inner():\n        from statbench import low\n"),
        "core/high/d.py": "def h():\n    from .c import K\n",
        "models/__init__.py": "",
        "models/m.py": "def f():\n    from statbench.low import a\n",
    })
    found, seen = imports_not_at_the_top(tmp_path, ("statbench.low", "statbench.high"),
                                         {("statbench.high.d", "statbench.high.c"): "why"})
    assert found == [
        "core/high/c.py:6: statbench.high.c imports statbench.low.b inside a function",
        "core/high/c.py:15: statbench.high.c imports statbench.low inside a function",
        "core/low/b.py:4: statbench.low.b imports statbench.low.a inside a function",
    ]
    assert seen == {("statbench.high.d", "statbench.high.c")}


# --- the tests laid out like the package ---------------------------------------------------------

#: Test folders that name no package, each with what its tests check.
OTHER_TEST_FOLDERS = {
    "browser": "the site in a real browser",
    "docs": "the docs and README against the code",
    "package_tree": "the package tree's shape (this file)",
}


def misplaced_tests(root: Path = ROOT) -> list[str]:
    """Where the test files are, as pytest's default import mode needs them and as a reader looks
    for them: none at the top of tests/ (only helper modules and conftest.py are there); each test
    folder names a package of the tree (tests/<core subpackage>/…, tests/models/<family>/…,
    tests/tasks/, tests/leaderboard/) or is one of ``OTHER_TEST_FOLDERS``; no test folder is a
    package; no two test modules or helpers share a base name across pyproject's testpaths."""
    dirs = package_dirs(root)
    tests = root / "tests"
    problems = [f"tests/{path.name}: a test file at the top of tests/ (move it to the folder of what it tests)"
                for path in sorted(tests.glob("*.py")) if path.name.startswith("test_") or path.name.endswith("_test.py")]
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir()):
        parts = folder.relative_to(tests).parts
        if any(part.startswith((".", "__")) for part in parts):
            continue  # __pycache__, .pytest_cache
        if parts[0] in OTHER_TEST_FOLDERS:
            if len(parts) > 1:
                problems.append(f"tests/{'/'.join(parts)}/: {parts[0]}/ holds no folders")
            continue
        top = f"statbench.{parts[0]}"
        package = dirs[top] / Path(*parts[1:]) if top in dirs else dirs["statbench"] / Path(*parts)
        if not (package / "__init__.py").is_file():
            problems.append(f"tests/{'/'.join(parts)}/: names no package of the tree "
                            f"({package.relative_to(root).as_posix()}/ is none)")
    problems += [f"{init.relative_to(root).as_posix()}: a test folder is not a package"
                 for init in sorted(tests.rglob("__init__.py"))]
    config = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    by_name: dict[str, list[str]] = {}
    for testpath in config["tool"]["pytest"]["ini_options"]["testpaths"]:
        for path in sorted((root / testpath).rglob("*.py")):
            if path.name not in ("conftest.py", "__init__.py") and "__pycache__" not in path.parts:
                by_name.setdefault(path.name, []).append(path.relative_to(root).as_posix())
    problems += [f"{name}: one base name for {', '.join(paths)} (pytest imports test modules by base name)"
                 for name, paths in sorted(by_name.items()) if len(paths) > 1]
    return problems


def test_tests_are_laid_out_like_the_package():
    problems = misplaced_tests()
    assert not problems, "\n".join(problems)


def test_the_test_folder_check_finds_a_stray_file_a_folder_of_no_package_and_a_twin(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackage-dir = { "statbench" = "harness", "statbench.models" = "plugins/builtin", '
        '"statbench.tasks" = "tasks" }\npackages = []\n[tool.pytest.ini_options]\ntestpaths = ["tests", "extra"]\n')
    for name in ["harness/__init__.py", "harness/run/__init__.py", "harness/run/templates/x.txt",
                 "plugins/builtin/__init__.py", "plugins/builtin/dense/__init__.py", "tasks/__init__.py",
                 "tests/conftest.py", "tests/run_fixtures.py", "tests/test_stray.py", "tests/run/test_a.py",
                 "tests/run/templates/test_t.py", "tests/nowhere/test_b.py", "tests/models/dense/test_c.py",
                 "tests/models/gone/test_d.py", "tests/tasks/test_e.py", "tests/tasks/__init__.py",
                 "tests/browser/conftest.py", "tests/browser/test_f.py", "tests/docs/more/test_g.py",
                 "tests/run/__pycache__/test_a.cpython-311.pyc", "extra/test_a.py"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert misplaced_tests(tmp_path) == [
        "tests/test_stray.py: a test file at the top of tests/ (move it to the folder of what it tests)",
        "tests/docs/more/: docs/ holds no folders",
        "tests/models/gone/: names no package of the tree (plugins/builtin/gone/ is none)",
        "tests/nowhere/: names no package of the tree (harness/nowhere/ is none)",
        "tests/run/templates/: names no package of the tree (harness/run/templates/ is none)",
        "tests/tasks/__init__.py: a test folder is not a package",
        "test_a.py: one base name for tests/run/test_a.py, extra/test_a.py (pytest imports test modules by base name)",
    ]
