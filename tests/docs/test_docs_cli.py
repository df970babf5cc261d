"""The docs and the command line agree (issue 38 §4).

1. Every ``statbench …`` command line in README.md and docs/**/*.md (fenced code, and inline
   code spans) names an existing command, and every ``--option`` on it exists on that
   command, read from click's command tree as the CLI builds it (entry-point commands of the
   built-in plugins included). An inline span that starts with a command's name without
   ``statbench`` (`leaderboard build --verify`, `grid --check`) is checked the same way; a
   bare `--option` span must exist on some command (other tools' options are listed apart,
   each with the page that names it).
2. What the docs say a command refuses, it refuses: a curated set of those sentences, each
   still found in its page, run for real (exit code 2, one error line saying why).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import click
import pytest

from statbench.commands.cli import cli
from statbench.leaderboard.sample import make_results, write_result
from statbench.testing import invoke_cli
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

#: inline spans of other programs' options, by the page that names them (not statbench's)
FOREIGN_OPTIONS = {
    ("README.md", "--port"),  # ray start's (the head's port)
    ("docs/grid.md", "--node-ip-address"),  # ray start's
    ("docs/models-lexical.md", "--add-modules"),  # the JVM's
    ("docs/models-neural.md", "--work"),  # bench/neural_minilm.py's
    ("docs/models-rerankers.md", "--no-deps"),  # pip's
}
#: a command line's end: a shell operator, or a comment
_END = re.compile(r"\s(?:&&|\|\||\||;)\s|\s#\s|\s#$")
#: ``statbench …`` where a shell command starts: the line's start (after a ``$`` prompt and
#: ``NAME=value`` settings), or after ``&&``, ``;``, ``|``, ``$(`` (not ``from statbench import``)
_COMMAND = re.compile(r"(?:^\s*(?:\$\s+)?|(?:&&|\|\||;|\||\$\()\s*)(?:[A-Z_][A-Z0-9_]*=\S*\s+)*statbench\s+(.*)")
_OPTION = re.compile(r"^--[a-z][a-z0-9-]*")


# --- the command tree ---------------------------------------------------------------------------


@cache
def command_tree() -> dict[tuple[str, ...], click.Command]:
    """Command path (``("leaderboard", "build")``; ``()`` for the root) -> command, every
    plugin command collected as when the command line is parsed."""
    tree: dict[tuple[str, ...], click.Command] = {}

    def walk(command: click.Command, ctx: click.Context, path: tuple[str, ...]) -> None:
        tree[path] = command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                walk(sub, click.Context(sub, parent=ctx, info_name=name), path + (name,))

    walk(cli, click.Context(cli, info_name="statbench"), ())
    return tree


def options_of(command: click.Command) -> set[str]:
    names = {"--help"}
    for param in command.params:
        if isinstance(param, click.Option):
            names.update(o for o in (*param.opts, *param.secondary_opts) if o.startswith("--"))
    return names


def resolve(words: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """The longest command path ``words`` start with, and the words after it."""
    tree, path = command_tree(), ()
    rest = list(words)
    while rest and path + (rest[0],) in tree:
        path += (rest.pop(0),)
    return path, rest


def options_in(words: list[str]) -> list[str]:
    """Every ``--option`` among ``words`` (``--a/--no-a`` both; ``--k=v`` as ``--k``)."""
    found = []
    for word in words:
        for part in word.strip("[]().,;:'\"").split("/"):
            match = _OPTION.match(part)
            if match:
                found.append(match.group(0))
    return found


# --- what the docs say ------------------------------------------------------------------------------


def _spans(text: str):
    """(line number, text, fenced) of every piece of code: each line of a fenced block (a
    line ending in ``\\`` joined to the next), and each inline code span outside them."""
    fenced, pending, start = False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced, pending = not fenced, ""
            continue
        if fenced:
            if line.rstrip().endswith("\\"):
                pending, start = pending + line.rstrip()[:-1] + " ", start or number
                continue
            yield (start or number), pending + line, True
            pending, start = "", 0
        else:
            for match in re.finditer(r"`([^`]+)`", line):
                yield number, match.group(1), False


def documented_commands(pages=None):
    """(where, command path, options, text, fenced) of every ``statbench …`` command line."""
    for page in pages or PAGES:
        rel = _where(page)
        for number, text, fenced in _spans(page.read_text("utf-8")):
            for match in _COMMAND.finditer(text):
                line = _END.split(match.group(1))[0]
                words = line.split()
                while words and words[0].startswith("-"):  # the root's own options (-v)
                    words.pop(0)
                path, rest = resolve(words)
                yield f"{rel}:{number}", path, options_in(rest), line, fenced


def documented_option_spans(pages=None):
    """(where, span words) of each inline code span that starts with an option or with a
    command's name (without ``statbench``)."""
    tops = {path[0] for path in command_tree() if path}
    for page in pages or PAGES:
        rel = _where(page)
        for number, text, fenced in _spans(page.read_text("utf-8")):
            words = text.split()
            if fenced or not words or words[0] == "statbench":
                continue
            if words[0].startswith("--") or ((words[0] in tops or words[0] in _leaf_names()) and len(words) > 1):
                yield f"{rel}:{number}", words


def _where(page: Path) -> str:
    return page.relative_to(REPO).as_posix() if page.is_relative_to(REPO) else page.name


@cache
def _leaf_names() -> dict[str, list[tuple[str, ...]]]:
    names: dict[str, list[tuple[str, ...]]] = {}
    for path in command_tree():
        if path:
            names.setdefault(path[-1], []).append(path)
    return names


def unknown_commands(pages=None) -> list[str]:
    """Command lines whose first word after ``statbench`` is a command word but no command
    (placeholders in capitals, and words of prose in a fenced diagram, are not)."""
    problems = []
    for where, path, options, line, fenced in documented_commands(pages):
        words = line.split()
        first = words[0] if words else ""
        if not path and re.fullmatch(r"[a-z][a-z-]+", first) and (options or not fenced):
            problems.append(f"{where}: `statbench {line.strip()}`: no command {first!r}")
    return problems


def unknown_line_options(pages=None) -> list[str]:
    """Options on a ``statbench …`` line that its command does not have."""
    tree = command_tree()
    problems = []
    for where, path, options, line, _ in documented_commands(pages):
        known = options_of(tree[path])
        for option in options:
            if option not in known:
                name = " ".join(("statbench",) + path)
                problems.append(f"{where}: {option} is not an option of `{name}` (in `statbench {line.strip()}`)")
    return problems


def unknown_span_options(pages=None) -> list[str]:
    """Options in spans without ``statbench``: on the command the span starts with (any
    command of that name: `build` is `pool build` or `leaderboard build`), or, for a span
    that starts with the option, on some command."""
    tree = command_tree()
    everywhere = set().union(*(options_of(c) for c in tree.values()))
    problems = []
    for where, words in documented_option_spans(pages):
        if words[0].startswith("--"):
            for option in options_in(words):
                if option not in everywhere and (where.split(":")[0], option) not in FOREIGN_OPTIONS:
                    problems.append(f"{where}: {option} is an option of no statbench command")
            continue
        path, rest = resolve(words)
        candidates = [path] if path else _leaf_names()[words[0]]
        rest = rest if path else words[1:]
        for option in options_in(rest):
            if not any(option in options_of(tree[c]) for c in candidates):
                names = " or ".join("`statbench " + " ".join(c) + "`" for c in candidates)
                problems.append(f"{where}: {option} is not an option of {names} (in `{' '.join(words)}`)")
    return problems


# --- 1. every documented option exists on its command ---------------------------------------------


def test_the_tree_holds_the_entry_point_commands():
    tree = command_tree()
    for path in [("run",), ("compare",), ("leaderboard", "build"), ("leaderboard", "export"), ("pool", "build"),
                 ("grid",), ("fuse",), ("submit",)]:
        assert path in tree, path
    assert "--verify" in options_of(tree[("leaderboard", "export")])


def test_the_docs_name_many_command_lines():
    found = list(documented_commands())
    assert len(found) > 150  # the scan reads the docs (a broken scan would pass everything)
    assert any(path == ("leaderboard", "export") and "--format" in options for _, path, options, _, _ in found)
    assert len(list(documented_option_spans())) > 100


def test_every_documented_command_exists():
    assert unknown_commands() == []


def test_every_option_on_a_documented_command_line_exists_on_that_command():
    assert unknown_line_options() == []


def test_every_option_named_in_a_span_exists_where_the_span_says():
    assert unknown_span_options() == []


def test_the_checks_catch_a_wrong_option_and_a_wrong_command(tmp_path):
    page = tmp_path / "bad.md"
    page.write_text("```sh\nstatbench leaderboard export R --board stard --verfy \\\n  --rows x\n"
                    "statbench lederboard build --out site\nstatbench output folders, in prose\n```\n"
                    "Run `compare --paired`, `build --verify`, `--no-such-option` or "
                    "`statbench evaluate --queries-both`.\n",
                    encoding="utf-8")
    assert unknown_line_options([page]) == [
        "bad.md:2: --verfy is not an option of `statbench leaderboard export` "
        "(in `statbench leaderboard export R --board stard --verfy    --rows x`)",
        "bad.md:4: --out is not an option of `statbench` (in `statbench lederboard build --out site`)",
        "bad.md:7: --queries-both is not an option of `statbench evaluate` (in `statbench evaluate --queries-both`)",
    ]
    assert unknown_commands([page]) == ["bad.md:4: `statbench lederboard build --out site`: no command 'lederboard'"]
    assert unknown_span_options([page]) == [
        "bad.md:7: --paired is not an option of `statbench compare` (in `compare --paired`)",
        "bad.md:7: --no-such-option is an option of no statbench command",
    ]


def test_every_foreign_option_is_still_named_where_listed():
    for page, option in FOREIGN_OPTIONS:
        assert f"`{option}" in (REPO / page).read_text("utf-8"), (page, option)
        assert all(option not in options_of(c) for c in command_tree().values())  # not statbench's after all


def test_compare_help_says_what_it_refuses():
    """`compare --help` said it paired 'on the queries both inputs scored' while the docs say
    such inputs are refused: both now say refused."""
    result = invoke_cli(["compare", "--help"])
    text = " ".join(result.output.split())
    assert "on the queries both inputs scored" not in text
    assert "exactly the same queries" in text and "refused" in text


def test_the_leaderboard_page_documents_export_verify():
    text = " ".join((REPO / "docs" / "leaderboard.md").read_text("utf-8").split())
    assert "check them with `leaderboard build --verify` first" not in text
    assert "`--verify` (with `--data-dir TASK=DIR` and `--allow-unverified` as for `build`" in text


# --- 2. what the docs say a command refuses, it refuses ------------------------------------------------


def _scores(value: float, qids) -> dict:
    return {q: {m: value for m in ("R@5", "R@10", "R@100", "nDCG@10")} for q in qids}


def _results(tmp_path, name: str, qids, **changes) -> Path:
    results = make_results(_scores(0.3, qids), model=name)
    for key, value in changes.items():
        results["task"][key] = value
    return write_result(tmp_path / name, results)


def _two_results(tmp_path, **other):
    a = _results(tmp_path, "a", ["q1", "q2", "q3"])
    b = _results(tmp_path, "b", other.pop("qids", ["q1", "q2", "q3"]), **other)
    return str(a), str(b)


def _compare_query_sets(tmp_path):
    a, b = _two_results(tmp_path, qids=["q1", "q2", "q4"])
    return ["compare", a, b]


def _compare_data(tmp_path):
    a, b = _two_results(tmp_path, data_checksum="b" * 64)
    return ["compare", a, b]


def _compare_version(tmp_path):
    a, b = _two_results(tmp_path, version="2")
    return ["compare", a, b]


def _compare_definition(tmp_path):
    a = _results(tmp_path, "a", ["q1", "q2"])
    other = make_results(_scores(0.3, ["q1", "q2"]), model="b")
    other["measures"] = [{**m, "ir_measure": "nDCG(gains={0:0,1:2})@10"} if m["label"] == "nDCG@10" else m
                         for m in other["measures"]]
    b = write_result(tmp_path / "b", other)
    return ["compare", str(a), str(b), "--measure", "nDCG@10"]


def _board(tmp_path):
    root = tmp_path / "r"
    write_result(root / "bm25", make_results(_scores(0.3, ["q1", "q2"])))
    budget = make_results(_scores(0.2, ["q1", "q2"]), model="dsr")
    budget["model"]["budget"] = "preset=cpu-small"
    write_result(root / "dsr", budget)
    return root


def _export(*extra):
    return lambda tmp_path: ["leaderboard", "export", str(_board(tmp_path)), "--board", "toy", *extra]


def _run_nan(tmp_path):
    return ["run", "--task", "stard", "--model", "bm25", "--param", "k1=nan", "--data-dir", str(tmp_path)]


def _run_twice(tmp_path):
    return ["run", "--task", "stard", "--task", "ukstat", "--model", "bm25", "--data-dir", str(tmp_path)]


#: (page, what the page says, the command, what the one line says)
REFUSALS = [
    ("docs/leaderboard.md", "Two results on different query sets or different data checksums are refused",
     _compare_query_sets, "different query sets"),
    ("docs/leaderboard.md", "Two results on different query sets or different data checksums are refused",
     _compare_data, "different data"),
    ("docs/leaderboard.md", "so are an unknown board, measure, row or baseline", _export("--measure", "P@7"), "P@7"),
    ("docs/leaderboard.md", "so are an unknown board, measure, row or baseline", _export("--rows", "nosuch"),
     "nosuch"),
    ("docs/leaderboard.md", "so are an unknown board, measure, row or baseline", _export("--baseline", "nosuch"),
     "nosuch"),
    ("docs/leaderboard.md", "naming one in `--rows` without it is refused", _export("--rows", "dsr"), "budget"),
    ("docs/leaderboard.md", "`--allow-unverified` as for `build`", _export("--allow-unverified"), "--verify"),
    ("docs/leaderboard.md", "`compare` refuses (one line, exit 2) two inputs scored on different data, by different "
     "task versions", _compare_version, "version"),
    ("docs/leaderboard.md", "or whose tested label measures different things", _compare_definition, "nDCG@10"),
    ("README.md", "`--param k1=nan`) is refused", _run_nan, "k1='nan' for bm25: not a finite number"),
    ("README.md", "Options given twice are refused", _run_twice, "--task"),
]


@pytest.mark.parametrize("page, says, make_args, message", REFUSALS,
                         ids=[f"{p}:{m}" for p, _, _, m in REFUSALS])
def test_what_the_docs_say_is_refused_is_refused(tmp_path, page, says, make_args, message):
    text = " ".join((REPO / page).read_text("utf-8").split())
    assert says in text, f"{page} no longer says {says!r}: update this case"
    args = make_args(tmp_path)
    result = invoke_cli(args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, result.output
    assert message in errors[0], errors[0]
    assert "Traceback" not in result.output


def test_the_board_of_the_export_cases_exists(tmp_path):
    """The refusals above are refusals of what they name, not of a board that is missing."""
    result = invoke_cli(["leaderboard", "export", str(_board(tmp_path)), "--board", "toy", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "bm25" in result.output and json.dumps("dsr") not in result.output
