"""The docs cover the plugin API: every hook and every public name has a heading in
docs/api.md (in the manner of datasette's tests/test_docs.py), and nothing documented
there is stale.

"Public", precisely: the hooks of ``statbench.registry.hookspecs`` (every hookspec of the plugin
manager), and for each module in ``API_MODULES`` the names in its ``__all__`` when it
defines one, else every class and function (decorated functions included) defined in
that module whose name does not start with ``_``. In docs/api.md each module is a
``## `statbench.X``` section and each name a ``### `name...``` heading in its section
(the first identifier of the heading's code span, e.g. ``### `Param``` or
``### `read_jsonl(path, required=())```); hooks are headed by their exact signature,
``### `register_tasks(register)```.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import statbench
from statbench.registry.plugins import pm

DOCS = Path(__file__).resolve().parents[1] / "docs"
API_DOC = DOCS / "api.md"

#: The modules a plugin or task author imports from (docs/api.md documents each).
API_MODULES = (
    "statbench.api",
    "statbench.contract.taskinfo",
    "statbench.loading.taskdef",
    "statbench.contract.params",
    "statbench.scoring.measures",
    "statbench.data.dataio",
    "statbench.data.runfile",
    "statbench.data.checksum",
    "statbench.data.validation",
    "statbench.loading.splits",
    "statbench.storage.cache",
    "statbench.registry.checks",
    "statbench.testing",
    "statbench.errors",
)
HOOKS_MODULE = "statbench.registry.hookspecs"

_SECTION = re.compile(r"^## `(statbench(?:\.\w+)*)`\s*$")
_ITEM = re.compile(r"^#{3,4} `([A-Za-z_][\w.]*)(\([^`]*\))?`")


# --- what the code says is public ---------------------------------------------------------


def public_names(module) -> list[str]:
    """``__all__`` when the module has one, else the classes and functions defined in it
    (not imported into it) whose names do not start with '_'."""
    if hasattr(module, "__all__"):
        return sorted(module.__all__)
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if inspect.isclass(obj) or inspect.isfunction(inspect.unwrap(obj)):
            if getattr(obj, "__module__", None) == module.__name__:
                names.append(name)
    return sorted(names)


def hook_signatures() -> dict[str, str]:
    """Hook name -> ``name(arg, ...)`` for every hookspec the plugin manager knows."""
    signatures = {}
    for name in dir(pm.hook):
        if name.startswith("_"):
            continue
        caller = getattr(pm.hook, name)
        if getattr(caller, "spec", None) is None:
            continue
        args = [a for a in caller.spec.argnames if a != "__multicall__"]
        signatures[name] = f"{name}({', '.join(args)})"
    return signatures


# --- what the docs say --------------------------------------------------------------------


def documented(text: str) -> dict[str, dict[str, str]]:
    """Module -> {name: heading's code span} from a markdown reference (fenced code skipped)."""
    sections: dict[str, dict[str, str]] = {}
    current = None
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        section = _SECTION.match(line)
        if section:
            current = sections.setdefault(section.group(1), {})
            continue
        if line.startswith("## "):
            current = None
            continue
        item = _ITEM.match(line)
        if item and current is not None:
            current[item.group(1)] = item.group(1) + (item.group(2) or "")
    return sections


def undocumented(modules, doc: dict[str, dict[str, str]]) -> list[str]:
    """Every public name of ``modules`` without a heading in its module's section."""
    missing = []
    for module in modules:
        headings = doc.get(module.__name__, {})
        missing += [f"{module.__name__}.{name}" for name in public_names(module) if name not in headings]
    return missing


@pytest.fixture(scope="module")
def api_doc() -> dict[str, dict[str, str]]:
    return documented(API_DOC.read_text("utf-8"))


# --- the tests ----------------------------------------------------------------------------


def test_every_hook_is_documented_with_its_signature(api_doc):
    hooks = hook_signatures()
    assert {"register_retrievers", "register_rerankers", "register_tasks"} <= set(hooks)
    headings = api_doc.get(HOOKS_MODULE, {})
    problems = [f"{name}: no heading `{signature}` under ## `{HOOKS_MODULE}`"
                for name, signature in sorted(hooks.items()) if headings.get(name) != signature]
    assert not problems, "docs/api.md: " + "; ".join(problems)


def test_every_hook_is_defined_in_hookspecs():
    """The plugin manager's hooks are exactly the hookspecs module's functions."""
    module = importlib.import_module(HOOKS_MODULE)
    assert sorted(hook_signatures()) == public_names(module)


def test_hookimpl_is_documented(api_doc):
    assert "statbench.hookimpl" in api_doc.get(HOOKS_MODULE, {})
    assert statbench.hookimpl is importlib.import_module(HOOKS_MODULE).hookimpl


@pytest.mark.parametrize("module_name", API_MODULES)
def test_every_public_name_is_documented(api_doc, module_name):
    module = importlib.import_module(module_name)
    assert module_name in api_doc, f"docs/api.md has no section ## `{module_name}`"
    missing = undocumented([module], api_doc)
    assert not missing, f"docs/api.md documents no heading for: {', '.join(missing)}"


def test_no_heading_names_something_that_does_not_exist(api_doc):
    stale = []
    for module_name, names in api_doc.items():
        module = importlib.import_module(module_name)
        for name in names:
            if name.startswith("statbench."):  # a fully qualified name (statbench.hookimpl)
                owner, _, attr = name.rpartition(".")
                if not hasattr(importlib.import_module(owner), attr):
                    stale.append(name)
            elif not hasattr(module, name):
                stale.append(f"{module_name}.{name}")
    assert not stale, f"docs/api.md documents names that do not exist: {', '.join(stale)}"


def test_every_documented_module_is_checked(api_doc):
    assert set(api_doc) == {*API_MODULES, HOOKS_MODULE}


def test_the_check_catches_a_missing_name():
    """The detector itself: a public class without a heading is reported, a private one
    or one imported from elsewhere is not."""
    import types

    module = types.ModuleType("statbench.fake")
    exec("from pathlib import Path\nclass Shown: pass\nclass Hidden: pass\nclass _Private: pass\n"
         "def helper(x): return x\n", module.__dict__)
    for obj in (module.Shown, module.Hidden, module._Private, module.helper):
        obj.__module__ = "statbench.fake"
    doc = documented("## `statbench.fake`\n\n### `Shown`\n\n```\n### `Hidden`\n```\n\n### `helper(x)`\n")
    assert undocumented([module], doc) == ["statbench.fake.Hidden"]
    module.__all__ = ["Shown"]
    assert undocumented([module], doc) == []


def test_hooks_are_listed_in_the_plugin_guide():
    guide = (DOCS / "plugins.md").read_text("utf-8")
    assert "api.md" in guide and "task-authors.md" in guide
    missing = [name for name in hook_signatures() if f"`{name}" not in guide]
    assert not missing, f"docs/plugins.md does not mention the hooks {', '.join(missing)}"


# --- the task author's guide ------------------------------------------------------------------


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_task_guide_python_declaration_equals_the_example_json():
    """The guide's Python declaration of example-civil is the JSON one, field by field."""
    example = pytest.importorskip("statbench_plugin_example")
    guide = (DOCS / "task-authors.md").read_text("utf-8")
    block = next(b for b in _python_blocks(guide) if b.startswith("# example-civil in Python"))
    namespace: dict = {}
    exec(compile(block, "docs/task-authors.md", "exec"), namespace)
    assert namespace["INFO"] == example.ExampleCivil.task_info()


def test_task_guide_walk_through_names_existing_files():
    guide = (DOCS / "task-authors.md").read_text("utf-8")
    root = Path(__file__).resolve().parents[1] / "plugins" / "statbench-plugin-example"
    named = set(re.findall(r"^\| `((?:statbench_plugin_example|tests)/[^`]+|pyproject\.toml)`", guide, flags=re.M))
    assert len(named) >= 10
    paths = []
    for name in named:
        paths += [name.replace("R01.jsonl", year) for year in ("R01.jsonl", "R02.jsonl", "R03.jsonl")] \
            if "R01.jsonl" in name else [name]
    missing = sorted(p for p in paths if not (root / p).is_file())
    assert not missing, f"docs/task-authors.md names files the example lacks: {', '.join(missing)}"


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation other than '-' and '_' dropped,
    spaces as '-'."""
    anchors = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("doc", ["task-authors.md", "api.md"])
def test_links_resolve(doc):
    text = (DOCS / doc).read_text("utf-8")
    broken = []
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
        if "://" in target:
            continue
        path = DOCS / target if target else DOCS / doc
        if not path.exists():
            if target != "beir.md":  # docs/beir.md is written alongside (--task beir:PATH, task new)
                broken.append(target)
            continue
        if anchor and path.suffix == ".md" and anchor not in _anchors(path.read_text("utf-8")):
            broken.append(f"{target}#{anchor}")
    assert not broken, f"docs/{doc} has broken links: {', '.join(broken)}"
