"""Fixtures of the example plugin's own tests; each test module imports them with
``from example_fixtures import ...`` (a ``conftest.py`` here would be imported under the
module name ``conftest`` and clash with the statbench repository's own ``tests/conftest.py``
when both suites run in one pytest session; in your own distribution a conftest.py is fine).

Every test gets its own statbench cache (runs and indexes are cached under
``$STATBENCH_CACHE``), and ``example_plugin`` makes the plugin's names known to statbench:
the installed distribution when ``pip install -e`` put its entry point in place, else the
package registered in-process (``statbench.testing.registered_plugin``).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from statbench.registry import plugins

PLUGIN_ROOT = Path(__file__).resolve().parents[1]

try:  # the tests also run from a checkout where the distribution is not installed
    importlib.import_module("statbench_plugin_example")
except ImportError:
    sys.path.insert(0, str(PLUGIN_ROOT))


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("STATBENCH_CACHE", str(root))
    monkeypatch.setenv("STATBENCH_DATA", str(root / "data"))
    plugins.reset_registry()
    yield root
    plugins.reset_registry()


@pytest.fixture
def example_plugin():
    """'entry point' when the installed distribution provides the task, else 'in-process'."""
    from statbench.testing import registered_plugin

    entry = plugins.get_registry().tasks.get("example-civil")
    if entry is not None:
        assert entry.plugin.distribution == "statbench-plugin-example"
        yield "entry point"
        return
    import statbench_plugin_example

    with registered_plugin(statbench_plugin_example, "charngram"):
        yield "in-process"
