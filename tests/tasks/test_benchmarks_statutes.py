"""The built-in benchmark statutes-v1: the issue's five tasks, each with the primary
measure, default protocol and version its definition declares."""

from statbench.registry import plugins
from statbench.tasks.benchmarks import STATUTES_V1


def test_statutes_v1_is_the_builtin_benchmark():
    entry = plugins.get_registry().benchmarks["statutes-v1"]
    assert entry.cls is STATUTES_V1
    assert entry.plugin.distribution == "statbench" and entry.plugin.error is None


def test_its_tasks_and_primary_measures_are_the_issues():
    assert [(t.task, t.measure, t.protocol) for t in STATUTES_V1.tasks] == [
        ("stard", "R@100", "5-fold"), ("ukstat", "nDCG@10", "test"), ("coliee", "F2@1", "R05"),
        ("bsard", "R@100", "test"), ("lleqa", "R@100", "test")]


def test_each_task_is_declared_as_its_definition_says():
    """A task definition that changes its primary measure, default protocol or version makes
    this fail: the benchmark then needs a new version, not a silent change of meaning."""
    registry = plugins.get_registry()
    for entry in STATUTES_V1.tasks:
        info = registry.tasks[entry.task].cls.task_info()
        assert (entry.measure, entry.protocol, entry.version) == (info.primary, info.protocol().name, info.version), \
            entry.task
