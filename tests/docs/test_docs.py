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
from repo_paths import REPO_ROOT

DOCS = REPO_ROOT / "docs"
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
    "statbench.registry.class_checks",
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
    root = REPO_ROOT / "plugins" / "statbench-plugin-example"
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


# --- code examples import only the plugin author's surface ---------------------------------

#: The statbench modules a code example in the docs may import from: the plugin author's one
#: import and the test helpers (and ``from statbench import hookimpl``, the marker's old home).
EXAMPLE_IMPORTS = ("statbench.api", "statbench.testing")
_IMPORT_FROM = re.compile(r"^\s*from\s+(statbench(?:\.[\w.]+)?)\s+import\s+\(?\s*([\w\s,]+)")
_IMPORT = re.compile(r"^\s*import\s+(statbench(?:\.[\w.]+)?)\b")


def imports_beyond_the_api(text: str, source: str) -> list[str]:
    """``source:line: statement`` for each import, in a fenced code block, of a statbench
    module other than ``EXAMPLE_IMPORTS``."""
    found = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            continue
        match = _IMPORT_FROM.match(line) or _IMPORT.match(line)
        if match is None:
            continue
        module = match.group(1)
        names = {n.strip() for n in match.group(2).split(",")} if match.re is _IMPORT_FROM else set()
        if module in EXAMPLE_IMPORTS or (module == "statbench" and names == {"hookimpl"}):
            continue
        found.append(f"{source}:{number}: {line.strip()}")
    return found


def test_code_examples_import_only_statbench_api():
    root = DOCS.parent
    found = []
    for path in [root / "README.md", *sorted(DOCS.glob("*.md"))]:
        found += imports_beyond_the_api(path.read_text("utf-8"), str(path.relative_to(root)))
    assert not found, "docs import statbench modules other than statbench.api / statbench.testing: " + "; ".join(found)


def test_the_import_check_catches_a_core_import():
    text = ("Prose mentions `from statbench.data.dataio import read_jsonl`.\n\n```python\n"
            "from statbench.api import Task\nfrom statbench import hookimpl\nfrom statbench.testing import check_task\n"
            "from statbench.contract.taskinfo import TaskInfo\n    import statbench.measures\n"
            "from statbench import plugins\nfrom statbench_plugin_example import ExampleCivil\n```\n")
    assert imports_beyond_the_api(text, "doc.md") == [
        "doc.md:7: from statbench.contract.taskinfo import TaskInfo",
        "doc.md:8: import statbench.measures",
        "doc.md:9: from statbench import plugins",
    ]


# --- README's layout table is the tree --------------------------------------------------------

ROOT = DOCS.parent


def layout_rows(readme: str) -> dict[str, str]:
    """README's "## Layout" table: folder (without its trailing '/') -> import name ('' when none)."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)/` \| (?:`([\w.]+)`)? *\|", section, flags=re.MULTILINE)
    return {folder: name for folder, name in rows}


def package_folders(root: Path = ROOT) -> dict[str, str]:
    """Folder (relative) -> package, for every package pyproject ships."""
    import tomllib

    setuptools = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    dirs = setuptools["package-dir"]
    folders = {}
    for package in setuptools["packages"]:
        base = max((name for name in dirs if package == name or package.startswith(name + ".")), key=len)
        folders["/".join([dirs[base], *package[len(base):].split(".")[1:]])] = package
    return folders


def tracked_top_folders(root: Path = ROOT) -> set[str] | None:
    """The top-level folders git tracks; ``None`` outside a git checkout."""
    import subprocess

    try:
        listed = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {line.split("/", 1)[0] for line in listed.splitlines() if "/" in line}


def layout_problems(rows: dict[str, str], packages: dict[str, str], top: set[str] | None, root: Path) -> list[str]:
    problems = [f"row `{folder}/` names a folder that does not exist" for folder in rows if not (root / folder).is_dir()]
    for folder, package in sorted(packages.items()):
        depth = package.count(".") - (1 if package.startswith("statbench.models") else 0)
        if folder in rows and rows[folder] != package:
            problems.append(f"row `{folder}/` says import name `{rows[folder]}`, the package is `{package}`")
        elif folder not in rows and depth <= 1:
            problems.append(f"package {package} ({folder}/) has no row")
    problems += [f"top-level folder {folder}/ has no row" for folder in sorted(top or ())
                 if not any(row == folder or row.startswith(folder + "/") for row in rows)]
    return problems


def test_readme_layout_table_matches_the_tree():
    rows = layout_rows((ROOT / "README.md").read_text("utf-8"))
    assert len(rows) >= 20
    problems = layout_problems(rows, package_folders(), tracked_top_folders(), ROOT)
    assert not problems, "README's layout table and the tree disagree: " + "; ".join(problems)


def test_readme_lists_the_core_layers_in_their_order():
    """The core's rows follow statbench's package docstring, which lists the layers bottom up."""
    import ast

    docstring = ast.get_docstring(ast.parse((ROOT / "harness" / "__init__.py").read_text("utf-8")))
    layers = [name for name in re.findall(r"^- :mod:`statbench\.(\w+)`", docstring, flags=re.MULTILINE)
              if (ROOT / "harness" / name).is_dir()]
    rows = [folder.split("/")[1] for folder in layout_rows((ROOT / "README.md").read_text("utf-8"))
            if folder.startswith("harness/") and folder.split("/")[1] in layers]
    assert rows == layers


def test_the_layout_check_catches_a_missing_and_a_stale_row(tmp_path):
    (tmp_path / "core" / "a").mkdir(parents=True)
    (tmp_path / "core" / "a" / "deep").mkdir()
    (tmp_path / "docs").mkdir()
    rows = {"core": "pkg", "core/gone": "pkg.gone", "docs": ""}
    packages = {"core": "pkg", "core/a": "pkg.a", "core/a/deep": "pkg.a.deep"}
    assert layout_problems(rows, packages, {"core", "docs", "bench"}, tmp_path) == [
        "row `core/gone/` names a folder that does not exist",
        "package pkg.a (core/a/) has no row",
        "top-level folder bench/ has no row",
    ]
    assert layout_problems({**rows, "core/a": "pkg.b"}, packages, None, tmp_path)[1] == \
        "row `core/a/` says import name `pkg.b`, the package is `pkg.a`"


# --- the guide's rule for formats statbench's readers do not cover -----------------------------


@pytest.fixture(scope="module")
def read_articles_xml():
    guide = (DOCS / "task-authors.md").read_text("utf-8")
    block = next(b for b in _python_blocks(guide) if b.startswith("# reading XML"))
    namespace: dict = {}
    exec(compile(block, "docs/task-authors.md", "exec"), namespace)
    return namespace["read_articles_xml"]


def test_the_xml_example_reads_a_good_file(read_articles_xml, tmp_path):
    from statbench.api import Document

    path = tmp_path / "articles.xml"
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<code>\n'
                    '  <article id="27" caption="Sublease">The lessee may not\n   sublet.</article>\n'
                    '  <article id=" 28 ">Minors may rescind.</article>\n</code>\n', encoding="utf-8")
    assert read_articles_xml(path) == {
        "27": Document(id="27", title="Sublease", text="Sublease\nThe lessee may not sublet."),
        "28": Document(id="28", title="", text="Minors may rescind.")}


@pytest.mark.parametrize("xml, line, field, message", [
    ('<code>\n<article id="1">a</article>\n<article id="2">b</article>\n<article id="3">c\n', 5, None,
     "not well-formed XML: no element found"),
    ('<code>\n<article id="1">a</article>\n<article caption="x">b</article>\n</code>\n', 3, "id", "empty"),
    ('<code>\n<article id="1">a</article>\n\n<article id="1">b</article>\n</code>\n', 4, "id", "appears twice"),
    ('<code>\n<article id="1">a <b>bold</article>\n</code>\n', 2, None, "mismatched tag"),
    ('<code/>\n', None, None, "no <article> element"),
])
def test_the_xml_example_names_file_and_line(read_articles_xml, tmp_path, xml, line, field, message):
    from statbench.api import DataFormatError

    path = tmp_path / "articles.xml"
    path.write_text(xml, encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_articles_xml(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (path, line, field)
    assert message in str(caught.value) and "articles.xml" in str(caught.value)


def test_the_xml_example_refuses_what_is_not_a_file(read_articles_xml, tmp_path):
    from statbench.api import DataFormatError

    with pytest.raises(DataFormatError, match="cannot read"):
        read_articles_xml(tmp_path)
