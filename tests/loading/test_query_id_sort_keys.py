"""Query ids that ``str.isdigit`` accepts and ``int`` cannot read (a superscript digit, more
than 4300 digits): the seeded k-fold splits and the dev carve sort ids numerically, and such
an id stopped a STARD load with a Python traceback. It now sorts as text; ordinary numeric
ids keep their order (and so every fold)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.loading.splits import carve_dev, kfold_assignment
from fixture_data import STARD_CORPUS, STARD_QUERIES, write_jsonl

HUGE = "9" * 5000


def test_folds_of_ids_int_cannot_read_are_made():
    folds = kfold_assignment(["1", "²", "2", HUGE, "٣"], 2, 0)
    assert sorted(q for ids in folds.values() for q in ids) == sorted(["1", "²", "2", HUGE, "٣"])
    assert carve_dev(["1", "²", HUGE], 1, 3, 0)[1] in (["1"], ["²"], [HUGE])


def test_numeric_ids_keep_their_numeric_order():
    folds = kfold_assignment([str(i) for i in range(20)], 1, 7)
    assert folds == {"fold-1": [str(i) for i in range(20)]}
    assert kfold_assignment(["10", "9", "b", "a", "²"], 1, 0)["fold-1"] == ["9", "10", "a", "b", "²"]


def test_a_stard_query_id_of_a_superscript_digit_loads_and_scores(tmp_path):
    root = tmp_path / "stard"
    write_jsonl(root / "corpus.jsonl", STARD_CORPUS)
    queries = [dict(q) for q in STARD_QUERIES]
    queries[0]["query_id"] = "²"
    (root / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("² Q0 民法典第五十四条 1 2.0 t\n1 Q0 民法典第五十六条 1 1.0 t\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["evaluate", str(run), "--task", "stard", "--data-dir", str(root), "--json"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def test_a_staging_folder_whose_pid_int_cannot_read_is_left_alone(tmp_path):
    # `task new` sweeps <out>/.statbench-task-staging-<pid>-*; a name whose "pid" is a
    # superscript digit (or 200 digits) is not one of its folders (it stopped the sweep with a traceback)
    import logging

    from statbench.commands.scaffold import STAGING_PREFIX, remove_stale_staging

    odd = [tmp_path / f"{STAGING_PREFIX}²-x", tmp_path / f"{STAGING_PREFIX}{'9' * 200}-x"]
    for path in odd:
        path.mkdir()
    assert remove_stale_staging(tmp_path, logging.getLogger("test")) == []
    assert all(path.is_dir() for path in odd)
