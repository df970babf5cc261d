"""Commands as plugins: the register_commands(cli) hook, name clashes, failures, --help cost."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from statbench.registry import plugins
from statbench.commands.cli import cli

HELLO = """
import click
from statbench import hookimpl

@hookimpl
def register_commands(cli):
    @cli.command()
    @click.argument("who", default="world")
    def hello(who):
        '''Say hello (a third-party command).'''
        click.echo(f"hello {who}")
"""

WITH_RETRIEVER_AND_FAILING_COMMANDS = """
import click
from statbench import hookimpl
from statbench.api import Retriever

class Echo(Retriever):
    name = "echo-cmd"
    description = "returns nothing"
    def index(self, corpus, ctx): pass
    def search(self, queries, k, ctx): return {q.id: [] for q in queries}

@hookimpl
def register_retrievers(register):
    register(Echo)

@hookimpl
def register_commands(cli):
    print("noise on stdout")
    raise {exc}
"""

TAKES_RUN = """
import click
from statbench import hookimpl

@hookimpl
def register_commands(cli):
    @cli.command(name="run")
    def hijack():
        click.echo("hijacked")

    @cli.command(name="pool")
    def pool():
        click.echo("hijacked pool")

    @cli.command(name="extra")
    def extra():
        click.echo("extra ok")
"""


def plugin_rows(dist: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    return [p for p in json.loads(result.output) if p["distribution"] == dist]


def test_builtin_commands_are_default_plugins():
    rows = {p["name"]: p for p in json.loads(CliRunner().invoke(cli, ["plugins", "--json"]).output)}
    for name in ("pool", "compare", "leaderboard"):
        assert rows[name]["distribution"] == "statbench"
        assert rows[name]["registered"] == {"commands": [name]}
        assert rows[name]["error"] is None
    help_text = CliRunner().invoke(cli, ["--help"]).output
    for name in ("run", "evaluate", "list", "plugins", "task", "pool", "compare", "leaderboard"):
        assert f"  {name} " in help_text


def test_third_party_distribution_adds_a_command(fake_distributions):
    fake_distributions("statbench-fake-hello", "sbfake_hello", HELLO)
    result = CliRunner().invoke(cli, ["--help"])
    assert "hello" in result.output and "Say hello" in result.output
    result = CliRunner().invoke(cli, ["hello", "statutes"])
    assert result.exit_code == 0, result.output
    assert result.output == "hello statutes\n"
    (row,) = plugin_rows("statbench-fake-hello")
    assert row["registered"] == {"commands": ["hello"]} and row["error"] is None
    table = CliRunner().invoke(cli, ["plugins"]).output
    assert "commands: hello" in table


@pytest.mark.parametrize("exc", ["RuntimeError('boom in commands')", "SystemExit(3)"])
def test_raising_register_commands_marks_the_plugin_failed_and_the_cli_works(fake_distributions, exc):
    fake_distributions("statbench-fake-cmdfail", "sbfake_cmdfail", WITH_RETRIEVER_AND_FAILING_COMMANDS.replace("{exc}", exc))
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0 and "noise on stdout" not in result.output
    result = CliRunner().invoke(cli, ["list", "models"])
    assert result.exit_code == 0, result.output
    assert "bm25" in result.output
    assert "echo-cmd" not in result.output  # a failed plugin is dropped whole, as for any hook
    assert "failed to load and was skipped" in result.output
    (row,) = plugin_rows("statbench-fake-cmdfail")
    expected = "RuntimeError: boom in commands" if "Runtime" in exc else "SystemExit(3) raised by the plugin"
    assert row["error"].startswith(expected)
    assert "echo-cmd" not in plugins.get_registry().retrievers


def test_a_command_may_not_replace_a_builtin_or_another_plugins_command(fake_distributions, stard_dir, tmp_path):
    fake_distributions("statbench-fake-takesrun", "sbfake_takesrun", TAKES_RUN)
    fake_distributions("statbench-fake-hello", "sbfake_hello", HELLO)
    fake_distributions("statbench-fake-hello2", "sbfake_hello2", HELLO.replace("hello {who}", "second {who}"))
    # the core `run` still runs
    result = CliRunner().invoke(cli, ["run", "--task", "stard", "--model", "bm25", "--data-dir", str(stard_dir),
                                      "--output", str(tmp_path / "out"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "hijacked" not in result.output
    assert CliRunner().invoke(cli, ["pool", "--help"]).output.count("Frozen candidate pools") == 1
    # what was not refused works; the first plugin (by distribution name) keeps `hello`
    assert CliRunner().invoke(cli, ["extra"]).output == "extra ok\n"
    assert CliRunner().invoke(cli, ["hello"]).output == "hello world\n"
    (row,) = plugin_rows("statbench-fake-takesrun")
    assert row["error"] is None and row["registered"] == {"commands": ["extra"]}
    assert row["refused_commands"]["run"] == "a built-in command of statbench has that name"
    assert "plugin 'pool' (statbench)" in row["refused_commands"]["pool"]
    (second,) = plugin_rows("statbench-fake-hello2")
    assert "plugin 'sbfake_hello' (statbench-fake-hello)" in second["refused_commands"]["hello"]
    table = CliRunner().invoke(cli, ["plugins"]).output
    assert "command 'run' of plugin 'sbfake_takesrun' (statbench-fake-takesrun) was refused" in table
    assert ("command 'hello' of plugin 'sbfake_hello2' (statbench-fake-hello2) was refused: another plugin "
            "registered a command of that name first (plugin 'sbfake_hello' (statbench-fake-hello))") in " ".join(
        table.split())


def test_a_failing_plugin_command_is_one_line_naming_the_plugin(fake_distributions):
    fake_distributions("statbench-fake-crash", "sbfake_crash", """
        from statbench import hookimpl

        @hookimpl
        def register_commands(cli):
            @cli.command()
            def crash():
                raise ValueError("bad\\nsecond line")
    """)
    result = CliRunner().invoke(cli, ["crash"])
    assert result.exit_code == 2
    assert result.output == ("Error: command 'crash' of plugin 'sbfake_crash' (statbench-fake-crash) failed: "
                             "ValueError: bad\n")


def test_in_process_plugin_can_add_a_command():
    import types

    import click

    from statbench import hookimpl
    from statbench.testing import registered_plugin

    module = types.ModuleType("inproc_cmd")

    @hookimpl
    def register_commands(cli):
        cli.add_command(click.Command("inproc", callback=lambda: click.echo("in process")))

    module.register_commands = register_commands
    with registered_plugin(module, "inproc_cmd"):
        assert CliRunner().invoke(cli, ["inproc"]).output == "in process\n"
    assert CliRunner().invoke(cli, ["inproc"]).exit_code == 2


def test_no_import_cycle_and_help_stays_light(isolated_cache):
    code = ("import sys; import statbench.commands.pool, statbench.commands.compare, statbench.leaderboard.cli; "
            "print('statbench.commands.cli' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    # the first invocation validates the task definitions; later ones never import jsonschema
    subprocess.run([sys.executable, "-m", "statbench.commands.cli", "list", "tasks"], capture_output=True, check=True)
    code = ("import sys; from click.testing import CliRunner; from statbench.commands.cli import cli; "
            "r = CliRunner().invoke(cli, ['--help']); assert r.exit_code == 0 and 'leaderboard' in r.output; "
            "print(sorted(m for m in ('jsonschema', 'rich', 'numpy', 'ir_measures', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_definitions_are_validated_until_stamped(tmp_path, monkeypatch):
    from importlib import resources

    from statbench.errors import StatbenchError
    from statbench.loading.taskdef import load_definition

    good = json.loads(resources.files("statbench.tasks").joinpath("ukstat.json").read_text("utf-8"))
    package = tmp_path / "sbdefs"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "good.json").write_text(json.dumps(good))
    (package / "bad.json").write_text(json.dumps({**good, "depth": "deep"}))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_definition("sbdefs", "good.json")["name"] == "ukstat"
    assert load_definition("sbdefs", "good.json")["name"] == "ukstat"  # stamped: no validation
    for _ in range(2):  # never stamped: refused every time
        with pytest.raises(StatbenchError, match="sbdefs/bad.json: depth: 'deep' is not of type 'integer'"):
            load_definition("sbdefs", "bad.json")
    sys.modules.pop("sbdefs", None)
