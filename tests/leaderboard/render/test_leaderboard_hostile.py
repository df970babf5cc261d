"""Fault injection on the leaderboard: hostile or broken results files, each with the exact
outcome. A file that cannot be published whole is skipped with one line naming the file
and the field, and nothing of it reaches the site; run files come only from inside the
results folder; runs on other split sets get their own board; a paired test is shown only
between results that scored exactly the same queries; the page's embedded JSON is strict."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import StatbenchError
from statbench.leaderboard.collect.identity import identity
from statbench.leaderboard.collect.rows import BoardKey, board_names, row_key
from statbench.leaderboard.render.build import build_site
from statbench.leaderboard.render.rows import reference_views
from statbench.leaderboard.render.templating import jinja_environment, json_for_html
from statbench.leaderboard.sample import SAMPLE_MEASURES, make_results, reranker_record, write_result
from statbench.results.record import parse_strict
from statbench.scoring.publishable import is_bounded
from statbench.scoring.significance import compare_to_baseline, query_set_difference

RUN = "q0 Q0 d0 1 1.0 hostile\n"
SENTINEL = 0.123456789  # a value written into a file, then swapped for a hostile token


def _strict_json(text: str):
    def refuse(token):
        raise ValueError(f"{token} in the page's JSON")

    return json.loads(text, parse_constant=refuse)


def _blob(html: str) -> dict:
    """The page's embedded row data, parsed as strictly as a browser's JSON.parse."""
    text = re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1)
    return _strict_json(text)


def _labels(html: str) -> list[str]:
    return sorted(r["label"] for r in _blob(html)["rows"].values())


def _scores(value: float, qids=None) -> dict:
    qids = qids if qids is not None else [f"q{i}" for i in range(6)]
    return {q: {m: value for m in SAMPLE_MEASURES} for q in qids}


def _varied(base: float, step: float, qids=None) -> dict:
    qids = qids if qids is not None else [f"q{i}" for i in range(12)]
    return {q: {m: round(base + step * i, 6) for m in SAMPLE_MEASURES} for i, q in enumerate(qids)}


def _write_raw(folder: Path, results: dict, edit=None, run_text: str = RUN) -> Path:
    """Write ``run.trec`` and ``results.json`` as text (so that what ``json.dumps`` would
    refuse can be written); ``edit`` rewrites the JSON text first."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.trec").write_text(run_text, encoding="utf-8")
    results = {**results, "run_file": {"path": "run.trec", "sha256": hashlib.sha256(run_text.encode()).hexdigest()}}
    text = json.dumps(results, indent=1, ensure_ascii=False)
    if edit is not None:
        text = edit(text)
    (folder / "results.json").write_text(text, encoding="utf-8")
    return folder / "results.json"


def _key(results: dict) -> str:
    return row_key(identity(results))


def _good_pair(root: Path) -> None:
    """Two valid results (bm25 and ql) that every site below keeps."""
    write_result(root / "bm25", make_results(_scores(0.3)))
    write_result(root / "ql", make_results(_scores(0.4), model="ql"))


def _site_files(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*") if p.is_file())


# --- strict JSON --------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_tokens_skip_the_file(tmp_path, token):
    root = tmp_path / "results"
    _good_pair(root)
    per_query = _scores(0.5)
    per_query["q3"]["R@100"] = SENTINEL
    hostile = make_results(per_query, model="nan-model")
    path = _write_raw(root / "nan", hostile, lambda text: text.replace(repr(SENTINEL), token))
    line = next(i for i, text in enumerate(path.read_text("utf-8").splitlines(), 1) if token in text)
    report = build_site(root, tmp_path / "site")
    expected = (f"skipped {path}, line {line}, field 'R@100': not valid JSON: {token} is not a number "
                "(NaN, Infinity and -Infinity are not JSON)")
    assert report.problems == [expected]
    assert report.rows == 2
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert _labels(html) == ["bm25", "ql"]  # strict parse of the embedded JSON succeeds
    assert "nan-model" not in html and "NaN" not in html and "Infinity" not in html


def test_nan_through_the_command_line(tmp_path):
    root = tmp_path / "results"
    _good_pair(root)
    hostile = make_results(_scores(0.5), model="nan-model")
    hostile["aggregate"]["R@5"]["mean"] = SENTINEL
    path = _write_raw(root / "nan", hostile, lambda text: text.replace(repr(SENTINEL), "NaN"))
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(root), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    line = next(i for i, text in enumerate(path.read_text("utf-8").splitlines(), 1) if "NaN" in text)
    assert result.stderr.splitlines() == [
        f"warning: skipped {path}, line {line}, field 'mean': not valid JSON: NaN is not a number "
        "(NaN, Infinity and -Infinity are not JSON)"
    ]
    assert "2 result(s) on 1 task page(s)" in result.stdout


def test_number_overflowing_to_infinity_skips_the_file(tmp_path):
    root = tmp_path / "results"
    _good_pair(root)
    hostile = make_results(_scores(0.5), model="huge-model")
    hostile["timings"]["total"] = SENTINEL
    path = _write_raw(root / "huge", hostile, lambda text: text.replace(repr(SENTINEL), "1e400"))
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"skipped {path}: not valid JSON: the number 1e400 is too large (it overflows to infinity)"]
    assert "huge-model" not in (tmp_path / "site" / "task-toy.html").read_text("utf-8")


def test_huge_integer_skips_the_file(tmp_path):
    root = tmp_path / "results"
    _good_pair(root)
    hostile = make_results(_scores(0.5), model="bigint-model")
    hostile["timings"]["total"] = SENTINEL
    path = _write_raw(root / "big", hostile, lambda text: text.replace(repr(SENTINEL), "9" * 400))
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"skipped {path}: not valid JSON: the number 99999999999999999999… is too large (400 digits)"]
    assert "bigint-model" not in (tmp_path / "site" / "task-toy.html").read_text("utf-8")


def test_duplicate_keys_skip_the_file(tmp_path):
    root = tmp_path / "results"
    _good_pair(root)
    hostile = make_results(_scores(0.2), model="dup-model")
    # a second R@100 in the aggregate: json.loads would silently keep the last one
    path = _write_raw(root / "dup", hostile,
                      lambda text: text.replace('"aggregate": {', '"aggregate": {\n  "R@100": {"mean": 1.0, "std": 0.0},', 1))
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"skipped {path}, field 'R@100': not valid JSON: duplicate key 'R@100' in an object"]
    assert "dup-model" not in (tmp_path / "site" / "task-toy.html").read_text("utf-8")


def test_unpaired_surrogate_and_bad_encoding_skip_the_file(tmp_path):
    root = tmp_path / "results"
    _good_pair(root)
    lone = make_results(_scores(0.2), model="lone")
    lone["model"]["description"] = "SURROGATE"
    lone_path = _write_raw(root / "lone", lone, lambda text: text.replace("SURROGATE", "x\\ud800y"))
    latin = root / "latin" / "results.json"
    latin.parent.mkdir(parents=True)
    latin.write_bytes(json.dumps(make_results(_scores(0.2), model="caf\u00e9"), ensure_ascii=False).encode("latin-1"))
    report = build_site(root, tmp_path / "site")
    offset = latin.read_bytes().index(b"caf\xe9") + 3
    assert sorted(report.problems) == sorted([
        f"skipped {lone_path}: not valid JSON: the string 'x\\ud800y' holds an unpaired UTF-16 surrogate (not text)",
        f"skipped {latin}: not UTF-8 text (invalid byte at offset {offset})",
    ])
    assert report.rows == 2


def test_parse_strict_direct():
    assert parse_strict('{"a": [1, 2.5, "\\ud83d\\ude00"]}') == {"a": [1, 2.5, "\U0001F600"]}  # a real pair is fine
    for text in ('{"a": NaN}', '{"a": Infinity}', '[-Infinity]', '{"a": 1, "a": 2}', '[1e999]', '["\\udc00"]'):
        with pytest.raises(ValueError):
            parse_strict(text)


# --- scores out of range ----------------------------------------------------------------------------


def _out_of_range(field: str) -> tuple[dict, str]:
    """Results with one score set to 7.5 (or a bad std) in ``field``, and the expected field text."""
    per_query = _scores(0.5)
    results = make_results(per_query, model=f"bad-{field}", splits={"fold-1": ["q0", "q1", "q2"], "fold-2": ["q3", "q4", "q5"]},
                           breakdown={"category": {"housing": {m: 0.5 for m in SAMPLE_MEASURES}}})
    if field == "aggregate":
        results["aggregate"]["R@100"]["mean"] = 7.5
        return results, "aggregate/R@100/mean: 7.5 is outside [0, 1]"
    if field == "std":
        results["aggregate"]["R@100"]["std"] = 1.5
        return results, "aggregate/R@100/std: 1.5 is larger than any std of scores in [0, 1]"
    if field == "all_queries":
        results["all_queries"]["nDCG@10"] = -0.25
        return results, "all_queries/nDCG@10: -0.25 is outside [0, 1]"
    if field == "splits":
        results["splits"][1]["scores"]["R@10"] = 1.0000001
        return results, "splits/fold-2/R@10: 1.0000001 is outside [0, 1]"
    if field == "per_query":
        results["per_query"]["q4"]["R@5"] = 7.5
        return results, "per_query/q4/R@5: 7.5 is outside [0, 1]"
    if field == "breakdown":
        results["breakdown"]["category"]["housing"]["R@100"] = 2.0
        return results, "breakdown/category/housing/R@100: 2.0 is outside [0, 1]"
    raise AssertionError(field)


@pytest.mark.parametrize("field", ["aggregate", "std", "all_queries", "splits", "per_query", "breakdown"])
def test_out_of_range_score_skips_the_file(tmp_path, field):
    root = tmp_path / "results"
    _good_pair(root)
    hostile, problem = _out_of_range(field)
    path = write_result(root / "bad", hostile)
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"skipped {path}: {problem}"]
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert _labels(html) == ["bm25", "ql"]  # the 7.5 does not rank first: it is not there
    assert f"bad-{field}" not in html and f"bad-{field}" not in (tmp_path / "site" / "index.html").read_text("utf-8")


def test_many_bad_scores_make_one_short_line(tmp_path):
    root = tmp_path / "results"
    per_query = _scores(7.5, [f"q{i}" for i in range(50)])
    path = _write_raw(root / "bad", make_results(per_query, model="bad"))
    report = build_site(root, tmp_path / "site")
    assert len(report.problems) == 1 and report.problems[0].startswith(f"skipped {path}: aggregate/R@5/mean: 7.5 is outside")
    # 4 aggregate means + 4 all_queries + 4 split scores + 50 x 4 per-query scores, 5 of them shown
    assert report.problems[0].endswith("(and 207 more)")
    assert report.rows == 0 and "No valid results were found." in (tmp_path / "site" / "index.html").read_text("utf-8")


def test_unbounded_measures_are_only_checked_for_being_finite(tmp_path):
    measures = ("R@10", "NumRet")
    per_query = {f"q{i}": {"R@10": 0.5, "NumRet": 100.0} for i in range(4)}
    root = tmp_path / "results"
    write_result(root / "a", make_results(per_query, measures=measures))
    report = build_site(root, tmp_path / "site")
    assert report.problems == [] and report.rows == 1
    assert _blob((tmp_path / "site" / "task-toy.html").read_text("utf-8"))["rows"].popitem()[1]["values"]["NumRet"] == 100.0
    assert is_bounded("nDCG(gains={0:0,1:1,2:3,3:7})@10") and is_bounded("RR(rel=2)@5") and is_bounded("AP")
    assert is_bounded("Rprec") and is_bounded("Success@1") and is_bounded("Judged@10") and is_bounded("ERR@20")
    assert not is_bounded("NumRet") and not is_bounded("RBP(p=0.8)") and not is_bounded("nDCG(gains={0:-1,1:1})@10")


def test_aggregate_that_is_not_the_mean_of_its_splits_is_skipped(tmp_path):
    root = tmp_path / "results"
    _good_pair(root)
    hostile = make_results(_scores(0.3), model="inflated")
    hostile["aggregate"]["nDCG@10"]["mean"] = 0.9  # in range, but not what the splits say
    path = write_result(root / "x", hostile)
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"skipped {path}: aggregate/nDCG@10/mean: 0.9 is not the mean over the splits (0.3)"]


def test_per_query_that_disagrees_with_the_splits_is_skipped(tmp_path):
    root = tmp_path / "results"
    hostile = make_results(_scores(0.3), model="forged")
    for scores in hostile["per_query"].values():
        scores["R@5"] = 0.9  # significance would be computed on figures the table does not show
    path = write_result(root / "x", hostile)
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"skipped {path}: per_query/*/R@5: the per-query mean 0.9 disagrees with the splits' (0.3)"]


def test_split_without_queries_is_skipped(tmp_path):
    root = tmp_path / "results"
    hostile = make_results(_scores(0.3), model="empty-fold", splits={"fold-1": [f"q{i}" for i in range(6)], "fold-2": []})
    path = write_result(root / "x", hostile)
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"skipped {path}: splits/fold-2: n_queries is 0 (a split without queries has no score)"]


def test_published_figures_out_of_range_are_not_shown():
    measures = [{"label": "R@10", "ir_measure": "R@10"}, {"label": "NumRet", "ir_measure": "NumRet"}]
    problems: list[str] = []
    views = reference_views({"paper": {"source": "s", "scores": {"R@10": 7.5, "NumRet": 12}},
                              "other": {"source": "s", "scores": {"R@10": float("nan")}}}, measures, problems)
    assert [[c["mean"] for c in v["cells"]] for v in views] == [[None, None], [None, 12]]
    assert problems == ["published figure 'other', R@10: nan is not a valid score: not shown",
                        "published figure 'paper', R@10: 7.5 is not a valid score: not shown"]


def test_embedded_json_never_holds_nan():
    with pytest.raises(ValueError):
        json_for_html({"x": float("nan")})
    with pytest.raises(ValueError):
        json_for_html({"x": float("inf")})


# --- run files ------------------------------------------------------------------------------------


SECRET = "top secret: this file must never be published\n"


def _points_at(root: Path, name: str, run_path: str) -> Path:
    """A valid results file whose run_file.path is ``run_path`` with the secret's checksum."""
    results = make_results(_scores(0.35), model=name)
    results["run_file"] = {"path": run_path, "sha256": hashlib.sha256(SECRET.encode()).hexdigest()}
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    return folder / "results.json"


def _published_texts(site: Path) -> list[str]:
    texts = []
    for path in _site_files(site):
        data = path.read_bytes()
        texts.append((gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace"))
    return texts


def test_run_files_outside_the_results_folder_are_never_copied(tmp_path):
    outside = tmp_path / "private"
    outside.mkdir()
    secret = outside / "secret"
    secret.write_text(SECRET, encoding="utf-8")
    root = tmp_path / "deep" / "results"
    _good_pair(root)
    absolute = _points_at(root, "absolute", str(secret))
    escaping = _points_at(root, "escaping", "../../../private/secret")
    (root / "linked").mkdir()
    os.symlink(secret, root / "linked" / "run.trec")
    linked = _points_at(root, "linked-model", "../linked/run.trec")
    report = build_site(root, tmp_path / "site")
    assert report.rows == 5
    resolved = secret.resolve()
    assert sorted(report.problems) == sorted([
        f"toy: absolute: run file {str(secret)!r} is an absolute path (run_file.path of {absolute}); "
        "run files are only taken from inside the results folder: not copied",
        f"toy: escaping: run file '../../../private/secret' leads outside the results folder {root} (to {resolved}) "
        f"(run_file.path of {escaping}): not copied",
        f"toy: linked-model: run file '../linked/run.trec' leads outside the results folder {root} (to {resolved}) "
        f"(run_file.path of {linked}): not copied",
    ])
    site = tmp_path / "site"
    html = (site / "task-toy.html").read_text("utf-8")
    for name in ("absolute", "escaping", "linked-model"):
        key = _key(make_results(_scores(0.35), model=name))
        assert not (site / "runs" / "toy" / f"{key}.trec.gz").exists()
        assert f"runs/toy/{key}.trec.gz" not in html
    assert sorted(p.name for p in (site / "runs" / "toy").iterdir()) == sorted(
        f"{_key(make_results(_scores(0.3), model=m))}.trec.gz" for m in ("bm25", "ql"))
    assert not any("top secret" in text for text in _published_texts(site))


@pytest.mark.parametrize("run_path, why", [
    ("C:\\Windows\\secret", "is an absolute path"),
    ("C:secret", "is an absolute path"),
    ("\\\\server\\share\\secret", "is an absolute path"),
    ("run\x00.trec", "is not a file name"),
    ("", "is not a file name"),
])
def test_other_run_paths_that_are_refused(tmp_path, run_path, why):
    root = tmp_path / "results"
    path = _points_at(root, "odd", run_path)
    report = build_site(root, tmp_path / "site", baseline="odd")
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"toy: odd: run file {run_path!r} {why} (run_file.path of {path})")
    assert not (tmp_path / "site" / "runs").exists()


def test_results_folder_given_through_a_symlink_and_dotdot_inside_it(tmp_path):
    real = tmp_path / "real"
    _good_pair(real)
    shared = real / "shared-runs"
    shared.mkdir()
    (shared / "ql.trec").write_text("q0 Q0 d9 1 1.0 ql\n", encoding="utf-8")
    inside = make_results(_scores(0.5), model="inside")
    inside["run_file"] = {"path": "../shared-runs/ql.trec",
                          "sha256": hashlib.sha256(b"q0 Q0 d9 1 1.0 ql\n").hexdigest()}
    (real / "inside").mkdir()
    (real / "inside" / "results.json").write_text(json.dumps(inside), encoding="utf-8")
    link = tmp_path / "link"
    os.symlink(real, link)
    report = build_site(link, tmp_path / "site")
    assert report.problems == [] and report.rows == 3
    copied = tmp_path / "site" / "runs" / "toy" / f"{_key(inside)}.trec.gz"
    assert gzip.decompress(copied.read_bytes()) == b"q0 Q0 d9 1 1.0 ql\n"


# --- boards: split sets ---------------------------------------------------------------------------


FOLDS = {f"R0{i}": [f"q{i}{j}" for j in range(6)] for i in range(1, 5)}


def _on(splits: list[str], model: str, base: float, step: float) -> dict:
    qids = [q for s in splits for q in FOLDS[s]]
    return make_results(_varied(base, step, qids), model=model, splits={s: FOLDS[s] for s in splits})


def test_runs_on_another_split_set_get_their_own_board(tmp_path):
    root = tmp_path / "results"
    full = ["R01", "R02", "R03", "R04"]
    write_result(root / "bm25", _on(full, "bm25", 0.1, 0.01))
    write_result(root / "ql", _on(full, "ql", 0.2, 0.01))
    write_result(root / "bm25-sub", _on(["R04", "R03"], "bm25", 0.1, 0.01))  # statbench run --split R04,R03
    write_result(root / "dense-sub", _on(["R04", "R03"], "dense", 0.4, 0.01))
    report = build_site(root, tmp_path / "site")
    assert report.rows == 4
    assert not any("superseded" in p for p in report.problems)  # bm25 on R03,R04 does not replace bm25 on all
    site = tmp_path / "site"
    pages = sorted(p.name for p in site.glob("task-*.html"))
    assert len(pages) == 2 and pages[1] == "task-toy.html" and re.fullmatch(r"task-toy-splits-r03-r04-[0-9a-f]{6}\.html", pages[0])
    main = (site / "task-toy.html").read_text("utf-8")
    assert _labels(main) == ["bm25", "ql"]
    assert "Splits: R01 (6 queries), R02 (6 queries), R03 (6 queries), R04 (6 queries)" in main
    assert main.count('<tr id="sig-') == 1 and "Holm–Bonferroni over the 4 tests of this board: 1 result tested on 4" in main
    side = next(p for p in site.glob("task-toy-splits-*.html")).read_text("utf-8")
    assert "<h1>toy @ splits R03,R04" in side and "Splits: R03 (6 queries), R04 (6 queries)</p>" in side
    assert _labels(side) == ["bm25", "dense"]
    # dense is tested against the bm25 run on the same 12 queries, not the bm25 run on 24
    assert side.count('<tr id="sig-') == 1
    assert re.search(r'<tr id="sig-[0-9a-f]+">\s*<td>dense</td>\s*<td class="num">12</td>', side)
    index = (site / "index.html").read_text("utf-8")
    assert ">toy</a>" in index and ">toy @ splits R03,R04</a>" in index


def test_board_names():
    a, b, c = "0" * 64, "f" * 64, "e" * 64
    full, sub = (("R01", 6), ("R02", 6)), (("R02", 6),)
    m = (("R@5", "R@5"),)

    def key(task, checksum, splits, version="1", measures=m):
        return BoardKey(task, version, checksum, splits, measures)

    boards = [key("t", a, full)] * 3 + [key("t", a, sub)] * 2 + [key("t", b, full), key("t", b, sub), key("u", b, sub),
                                                                 key("t", c, full)]
    # named in words from what differs, never by checksum: data by its corpus size when recorded
    assert board_names(boards, {key("t", b, full): 1842, key("t", b, sub): 1842}) == {
        key("t", a, full): "t",
        key("t", a, sub): "t @ splits R02",
        key("t", b, full): "t @ 1,842 documents",
        key("t", b, sub): "t @ 1,842 documents @ splits R02",
        key("t", c, full): "t @ other data",
        key("u", b, sub): "u",
    }
    # same split names, other query counts: the counts tell them apart
    assert board_names([key("t", a, (("test", 100),))] * 2 + [key("t", a, (("test", 90),))])[key("t", a, (("test", 90),))] \
        == "t @ splits test (90)"
    # another task version, a label that measures something else
    named = board_names([key("t", a, full)] * 2 + [key("t", a, full, version="2"), key("t", a, full, measures=(("R@5", "P@5"),))])
    assert named[key("t", a, full, version="2")] == "t @ version 2"
    assert named[key("t", a, full, measures=(("R@5", "P@5"),))] == "t @ other measure definitions"


# --- paired tests need the same queries -------------------------------------------------------------


def test_no_paired_test_between_different_query_sets(tmp_path):
    root = tmp_path / "results"
    qids = [f"q{i}" for i in range(12)]
    other = qids[:10] + ["x10", "x11"]  # same split name and count, two other queries
    write_result(root / "bm25", make_results(_varied(0.1, 0.01, qids)))
    write_result(root / "dense", make_results(_varied(0.4, 0.01, qids), model="dense"))
    ql = make_results(_varied(0.2, 0.01, other), model="ql")
    ql_path = write_result(root / "ql", ql)
    report = build_site(root, tmp_path / "site")
    assert report.rows == 3
    assert report.problems == [
        f"toy: ql: not tested against bm25 on nDCG@10 ({ql_path} vs {root / 'bm25' / 'results.json'}): different "
        "query sets: 2 queries scored only by the baseline (e.g. q10, q11); 2 queries scored only by the system "
        "(e.g. x10, x11)"
    ]
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    key = _key(ql)
    assert _labels(html) == ["bm25", "dense", "ql"]  # the row is shown, its test is not
    assert f'id="sig-{key}"' not in html and f'href="#sig-{key}"' not in html
    assert html.count('<tr id="sig-') == 1 and "Holm–Bonferroni over the 4 tests of this board: 1 result tested on 4" in html
    assert "n.s." not in html


def test_n_zero_never_renders_as_a_test(tmp_path):
    root = tmp_path / "results"
    write_result(root / "bm25", make_results(_scores(0.3)))
    empty = make_results(_scores(0.3), model="ql")
    empty["per_query"] = {}  # aggregate and splits only: nothing to pair
    path = write_result(root / "ql", empty)
    report = build_site(root, tmp_path / "site")
    assert report.problems == [f"toy: ql: not tested against bm25 on nDCG@10 ({path} vs {root / 'bm25' / 'results.json'}): "
                               "no per-query score in the system"]
    html = (tmp_path / "site" / "task-toy.html").read_text("utf-8")
    assert '<tr id="sig-' not in html and "n.s." not in html and 'class="sig-table"' not in html


def test_compare_to_baseline_refuses_other_query_sets():
    base = {"a": 0.1, "b": 0.2}
    assert query_set_difference(base, {"a": 0.3, "b": 0.1}) is None
    assert query_set_difference(base, {}) == "no per-query score in the system"
    assert query_set_difference({}, {}) == "no per-query score in the baseline and the system"
    assert query_set_difference(base, {"a": 0.1, "c": 0.3}) == (
        "different query sets: 1 query scored only by the baseline (e.g. b); 1 query scored only by the system (e.g. c)")
    with pytest.raises(StatbenchError, match="'s' cannot be tested against 'base' on R@5: different query sets"):
        compare_to_baseline("base", base, {"s": {"a": 0.5}}, "R@5")
    with pytest.raises(StatbenchError, match="no per-query score in 'base' and 's'"):
        compare_to_baseline("base", {}, {"s": {}}, "R@5")


# --- hostile strings -------------------------------------------------------------------------------


PAYLOAD = "</script><script>alert(1)</script><img src=x onerror=alert(2)>\"'&amp;<!--\u2028"


def _hostile_results(tmp_path) -> Path:
    root = tmp_path / "results"
    write_result(root / "bm25", make_results(_scores(0.3), breakdown={"category": {"a": {m: 0.3 for m in SAMPLE_MEASURES}}}))
    hostile = make_results(
        _scores(0.6), model=PAYLOAD, family=PAYLOAD, params={PAYLOAD: PAYLOAD}, pool=PAYLOAD,
        reranker=reranker_record(PAYLOAD, family=PAYLOAD, params={"k": PAYLOAD}), command=PAYLOAD, created=PAYLOAD,
        breakdown={PAYLOAD: {PAYLOAD: {m: 0.6 for m in SAMPLE_MEASURES}}},
    )
    hostile["statbench_version"] = PAYLOAD
    hostile["model"]["plugin"] = {"name": PAYLOAD, "distribution": PAYLOAD, "version": PAYLOAD}
    hostile["model"]["version"] = PAYLOAD
    hostile["model"]["description"] = PAYLOAD
    hostile["task"]["protocol"] = PAYLOAD
    hostile["task"]["dropped"] = [PAYLOAD]
    hostile["environment"] = {"python": PAYLOAD, "platform": PAYLOAD, "accelerator": PAYLOAD}
    write_result(root / "hostile", hostile)
    return root


def test_hostile_strings_are_escaped_in_html_and_in_the_embedded_json(tmp_path):
    env = jinja_environment()
    assert env.autoescape is True or env.autoescape("task.html") is True
    root = _hostile_results(tmp_path)
    report = build_site(root, tmp_path / "site")
    assert report.rows == 2
    site = tmp_path / "site"
    pages = sorted(site.glob("*.html"))
    assert [p.name for p in pages] == ["index.html", "task-toy.html"]
    for page in pages:
        html = page.read_text("utf-8")
        for raw in ("<script>alert(1)", "<img src=x", "</script><script>", "<!--", "\"'&amp;"):
            assert raw not in html, (page.name, raw)
        # only the page's own script tags
        assert html.count("<script") == (2 if page.name.startswith("task-") else 1), page.name
    html = (site / "task-toy.html").read_text("utf-8")
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&#34;&#39;&amp;amp;&lt;!--" in html
    script = re.search(r'<script type="application/json" id="lb-data">(.*?)</script>', html, re.S).group(1)
    assert "\u2028" not in script and "\\u2028" in script and "\\u003c/script\\u003e" in script
    blob = _blob(html)
    hostile = next(r for r in blob["rows"].values() if r["label"].startswith(PAYLOAD))
    assert hostile["family"] == PAYLOAD and hostile["pool"] == PAYLOAD
    assert hostile["label"] == f"{PAYLOAD} ({PAYLOAD}={PAYLOAD}) → {PAYLOAD} (k={PAYLOAD}) [pool {PAYLOAD}]"


def test_warnings_are_one_printable_line_each(tmp_path):
    root = tmp_path / "results"
    write_result(root / "bm25", make_results(_scores(0.3)))
    evil = make_results(_scores(0.4), model="evil\nwarning: all fine\x1b[2J")
    write_result(root / "evil", evil)
    (root / "evil" / "run.trec").write_text("edited\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--results", str(root), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"warning: toy: evil\\nwarning: all fine\\x1b[2J: run file {root / 'evil' / 'run.trec'} does not match the "
        f"checksum in the results (run_file.sha256 of {root / 'evil' / 'results.json'}): not linked"
    ]


def test_hostile_site_in_headless_chromium(tmp_path):
    """The hostile site in a real browser: no dialog, no script error, the name is text."""
    chromium = os.environ.get("STATBENCH_CHROMIUM", "/usr/bin/chromium")
    if not (Path(chromium).is_file() or shutil.which(chromium)):
        pytest.skip(f"needs Chromium at {chromium}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
    build_site(_hostile_results(tmp_path), tmp_path / "site")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=chromium, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        try:
            context.set_default_timeout(15_000)
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
            page = context.new_page()
            dialogs, errors = [], []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((tmp_path / "site" / "task-toy.html").as_uri())
            page.click("th[data-col='m:R@10'] button.sort")  # the script parsed the data and sorts
            names = page.eval_on_selector_all("#leaderboard tbody.row tr.main td.model > .name",
                                              "els => els.map(e => e.textContent)")
            assert names == [PAYLOAD, "bm25"]
            page.locator("button.toggle").first.click()
            assert dialogs == [] and errors == []
        finally:
            context.close()


# --- the compare command --------------------------------------------------------------------------


def test_compare_refuses_other_query_sets_other_data_and_bad_files(tmp_path):
    qids = [f"q{i}" for i in range(12)]
    a = write_result(tmp_path / "a", make_results(_varied(0.1, 0.01, qids)))
    b = write_result(tmp_path / "b", make_results(_varied(0.2, 0.01, qids[:10]), model="ql"))
    result = CliRunner().invoke(cli, ["compare", str(a), str(b)])
    assert result.exit_code == 2
    assert (f"no paired test of {b} against {a} on nDCG@10: different query sets: 2 queries scored only by "
            f"A ({a}) (e.g. q10, q11); a paired test needs the same queries on both sides") in result.output
    other = make_results(_varied(0.2, 0.01, qids), model="ql")
    other["task"]["data_checksum"] = "f" * 64
    c = write_result(tmp_path / "c", other)
    result = CliRunner().invoke(cli, ["compare", str(a), str(c)])
    assert result.exit_code == 2 and "were scored on different data of task 'toy'" in result.output
    bad = make_results(_varied(0.2, 0.01, qids), model="bad")
    bad["per_query"]["q3"]["R@5"] = 7.5
    d = write_result(tmp_path / "d", bad)
    result = CliRunner().invoke(cli, ["compare", str(a), str(d)])
    assert result.exit_code == 2 and f"{d}: per_query/q3/R@5: 7.5 is outside [0, 1]" in result.output
    nan = _write_raw(tmp_path / "e", make_results(_varied(0.2, 0.01, qids), model="nan"),
                     lambda text: text.replace('"R@5": 0.2,', '"R@5": NaN,', 1))
    result = CliRunner().invoke(cli, ["compare", str(a), str(nan)])
    assert result.exit_code == 2 and "not valid JSON: NaN is not a number" in result.output
