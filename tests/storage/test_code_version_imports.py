"""The code version's reading of import statements (storage.keys): the one-line forms read
without the parser give exactly what ast.parse gives, anything else goes to the parser, and
a module's name inside another module is never taken for a submodule."""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from statbench.storage import keys

ROOT = Path(__file__).resolve().parents[2]

EDGE_CASES = [
    b"import a", b"import a.b.c as d, e  # a comment, with a comma", b"import a\t,\tb as c", b"import a#c",
    b"from . import x", b"from .. import x as y", b"from .a.b import c, d as e", b"from\ta\timport\tb",
    b"from a import (b)", b"from a import (\n    b,\n    c,\n)", b"from a import *", b"import a; import b",
    b"import a \\", b"from a import b, \\", b"import a,", b"from a import b,", b"import a as",
    b"from a import b as c as d", b"import match, case, _, type", b"from a import None", b"import a.if",
    b"from a.if import b", b"import as", b"from a import class", b"import \xc3\xa9t\xc3\xa9",
    b"import a .b", b"import a. b", b"from . a import b", b"from .a import b.c", b"import __debug__",
    b"from x import __debug__", b"from __future__ import annotations", b"from __future__ import braces",
    b"import this and that", b"from the shelf import the books", b"import (a)",
]


def parsed(text: bytes):
    try:
        return [ast.dump(node) for node in ast.parse(text).body]
    except SyntaxError:
        return SyntaxError


def read(text: bytes):
    keys._statement.cache_clear()
    try:
        return [ast.dump(node) for node in keys._statement(text)]
    except SyntaxError:
        return SyntaxError


def tree_statements() -> set[bytes]:
    found = set()
    for folder in ("harness", "plugins", "tasks", "leaderboard", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            found.update(m.group(0).strip() for m in keys._IMPORT.finditer(path.read_bytes()))
    return found


@pytest.mark.parametrize("text", EDGE_CASES)
def test_an_import_statement_reads_as_the_parser_reads_it(text):
    assert read(text) == parsed(text)


def test_every_import_statement_of_the_tree_reads_as_the_parser_reads_it():
    statements = tree_statements()
    assert len(statements) > 1000
    assert [t for t in statements if read(t) != parsed(t)] == []


def test_a_name_inside_a_module_is_no_submodule_and_a_submodule_is_found():
    import statbench.storage.keys as module

    assert keys._source_file("statbench.storage.keys.code_version") is None
    assert keys._source_file("statbench.storage.keys") == Path(module.__file__)
    sys.modules.pop("statbench.results.__main__", None)
    assert keys._source_file("statbench.results.__main__") == Path(module.__file__).parents[1] / "results/__main__.py"


def test_a_docstring_line_that_reads_like_an_import_keeps_the_real_imports(tmp_path, monkeypatch):
    package = tmp_path / "pkgdoc"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "b.py").write_text("X = 1\n")
    (package / "c.py").write_text("Y = 1\n")
    (package / "a.py").write_text(textwrap.dedent('''\
        """A module whose docstring says
        import this and that
        """
        from pkgdoc import b


        def later():
            from pkgdoc import c
            return c
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module("pkgdoc.a")
        assert set(keys.code_files(module)) >= {"pkgdoc.a", "pkgdoc.b", "pkgdoc.c", "pkgdoc"}
    finally:
        for name in [n for n in sys.modules if n == "pkgdoc" or n.startswith("pkgdoc.")]:
            del sys.modules[name]
