"""A plugin author's own tests: statbench.testing checks the plugin's contract."""

from example_fixtures import isolated_cache  # noqa: F401  (fixtures; first: it finds the package)

from statbench.testing import check_reranker, check_retriever
from statbench_plugin_example import CharNgram, LengthPrior


def test_charngram_conforms(tmp_path):
    rankings = check_retriever(CharNgram, tmp_path)
    assert rankings["q1"][0][0] == "d1"  # "when is the rent due" shares most trigrams with d1


def test_length_prior_conforms(tmp_path):
    check_reranker(LengthPrior, tmp_path)
