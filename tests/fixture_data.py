"""Small task data the tests write into their own folders (never ../shared).

Imported by name (``from fixture_data import ...``): a module named ``conftest`` would
clash with the example plugin's own conftest when both test folders run together."""

from __future__ import annotations

import json
from pathlib import Path

# A miniature STARD: six articles, four queries (names are the doc ids).
STARD_CORPUS = [
    {"id": 1, "name": "建筑法第一条", "content": "为了加强对建筑活动的监督管理，维护建筑市场秩序，保证建筑工程的质量和安全。"},
    {"id": 2, "name": "建筑法第二条", "content": "在中华人民共和国境内从事建筑活动，实施对建筑活动的监督管理，应当遵守本法。"},
    {"id": 3, "name": "民法典第五十四条", "content": "自然人从事工商业经营，经依法登记，为个体工商户。个体工商户可以起字号。"},
    {"id": 4, "name": "民法典第五十六条", "content": "个体工商户的债务，个人经营的，以个人财产承担；家庭经营的，以家庭财产承担。"},
    {"id": 5, "name": "刑法第一条", "content": "为了惩罚犯罪，保护人民，根据宪法，结合我国同犯罪作斗争的具体经验及实际情况，制定本法。"},
    {"id": 6, "name": "婚姻法第二条", "content": "实行婚姻自由、一夫一妻、男女平等的婚姻制度。保护妇女、儿童和老人的合法权益。"},
]
STARD_QUERIES = [
    {"query_id": 0, "问题": "谁可以成为个体工商户？", "match_id": [3], "match_name": ["民法典第五十四条"]},
    {"query_id": 1, "问题": "个体工商户的债务由谁承担？", "match_id": [4], "match_name": ["民法典第五十六条"]},
    {"query_id": 2, "问题": "建筑活动的监督管理适用什么法律？", "match_id": [1, 2], "match_name": ["建筑法第二条", "建筑法第一条"]},
    {"query_id": 3, "问题": "婚姻制度的基本原则是什么？", "match_id": [6], "match_name": ["婚姻法第二条"]},
    {"query_id": 4, "问题": "为什么要惩罚犯罪？", "match_id": [5], "match_name": ["刑法第一条"]},
]


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_uk_pool(root: Path, passages: dict[str, str], queries: dict[str, str], qrels: str, pool: str) -> Path:
    """A ukstat data folder in the substitute layout (``qrels``: the qrels.tsv text) with the
    frozen pool ``hand`` (``pool``: its TREC run text)."""
    write_jsonl(root / "substitute" / "corpus.jsonl", [{"id": k, "content": v} for k, v in passages.items()])
    write_jsonl(root / "substitute" / "queries.jsonl", [{"qid": q, "query": t} for q, t in queries.items()])
    (root / "substitute" / "qrels.tsv").write_text(qrels)
    (root / "pools").mkdir()
    (root / "pools" / "hand.trec").write_text(pool)
    return root


def run_stard_outputs(root: Path, param_lists) -> Path:
    """Finished output sets of ``statbench run --model bm25`` on the miniature STARD, one per
    list of extra arguments (``["--param", "k1=0.9"]``), in run's default layout under
    ``root`` (a private cache there); ``sys.argv`` is set as a shell would, since results.json
    records it. Returns ``root``."""
    import sys

    import pytest
    from click.testing import CliRunner

    from statbench.commands.cli import cli
    from statbench.registry import plugins

    data = root / "stard"
    write_jsonl(data / "corpus.jsonl", STARD_CORPUS)
    (data / "queries.json").write_text(json.dumps(STARD_QUERIES, ensure_ascii=False), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STATBENCH_CACHE", str(root / "cache"))
        mp.chdir(root)
        plugins.reset_registry()
        for extra in param_lists:
            args = ["run", "--task", "stard", "--model", "bm25", *extra, "--data-dir", str(data), "--no-progress"]
            mp.setattr(sys, "argv", ["statbench", *args])
            result = CliRunner().invoke(cli, args, catch_exceptions=False)
            assert result.exit_code == 0, result.output
        plugins.reset_registry()
    return root


#: a submission card's options for `statbench submit` (a local run, no training data)
SUBMIT_CARD = ["--local", "--training-data", "none", "--hardware", "2 CPU cores", "--licence", "MIT",
               "--author", "Ada Lab"]


def submitted_repository(root: Path, made: Path) -> Path:
    """A results repository at ``root`` holding two submissions of :func:`run_stard_outputs`'s
    runs in ``made`` (made with ``[]`` and ``["--param", "k1=0.9"]``): bm25 at its defaults,
    no test query seen, and bm25 k1=0.9, whose card declares that test queries were seen."""
    from click.testing import CliRunner

    from statbench.commands.cli import cli
    from statbench.leaderboard.repo.submission import write_repository_marker

    root.mkdir()
    write_repository_marker(root)
    outputs = made / "statbench-output" / "stard"
    for folder, seen in (("bm25", "--no-test-queries-seen"), ("bm25,k1=0.9", "--test-queries-seen")):
        result = CliRunner().invoke(cli, ["submit", str(outputs / folder), "--to", str(root), *SUBMIT_CARD, seen])
        assert result.exit_code == 0, result.output
    return root


def edit_results(folder: Path, change) -> None:
    """Change an output set's results.json in place (``change``: a function of the parsed object)."""
    path = folder / "results.json"
    obj = json.loads(path.read_text("utf-8"))
    change(obj)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")


def edit_run(folder: Path, old: str, new: str, *, record: bool) -> None:
    """Replace text in an output set's run file; ``record``: write its new sha256 into
    results.json too."""
    import hashlib

    run = folder / "run.trec"
    text = run.read_text("utf-8")
    assert old in text
    run.write_text(text.replace(old, new, 1), encoding="utf-8")
    if record:
        sha = hashlib.sha256(run.read_bytes()).hexdigest()
        edit_results(folder, lambda obj: obj["run_file"].__setitem__("sha256", sha))


def rows_by_folder(collected) -> dict[str, object]:
    """The collected rows by the name of their results file's folder."""
    return {row.path.parent.name: row for board in collected.boards.values() for row in board}


def empty_results_repository(tmp_path: Path) -> Path:
    """A results repository with nothing in it but its marker (``tmp_path/repo``)."""
    from statbench.leaderboard.repo.submission import write_repository_marker

    root = tmp_path / "repo"
    root.mkdir()
    write_repository_marker(root)
    return root


def add_official(root, train=("0", "1", "2"), dev=("3", "4"), sub="data/example"):
    """STARD's official train/dev split (its second protocol) added to a STARD folder."""
    folder = root / sub
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.query.txt").write_text("".join(f"{q}\tquestion {q}\n" for q in train), encoding="utf-8")
    (folder / "dev.query.txt").write_text("".join(f"{q}\tquestion {q}\n" for q in dev), encoding="utf-8")
