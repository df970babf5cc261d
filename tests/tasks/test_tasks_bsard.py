"""BSARD: heading structure, seeded dev carve-out, validation, and a scored fixture run."""

import csv
import json
import logging
import math

import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.api import Retriever
from statbench.commands.cli import cli
from statbench.errors import DataFormatError, DownloadError
from statbench.results.record import load_results
from statbench.loading.splits import carve_dev
from statbench.tasks.bsard import Bsard, heading_fields
from statbench.testing import registered_plugin

LOG = logging.getLogger("test")
ARTICLE_HEADER = ["id", "article", "code", "article_no", "description", "law_type"]
QUESTION_HEADER = ["id", "question", "category", "subcategory", "extra_description", "article_ids"]

ARTICLES = [
    ["1", "Le mariage est contracté devant l'officier de l'état civil.", "Code civil", "75",
     "Livre Ier : Des personnes, Titre V : Du mariage, Chapitre II : Des formalités", "regional"],
    ["2", "Les époux se doivent mutuellement fidélité, secours et assistance.", "Code civil", "213",
     "Livre Ier : Des personnes, Titre V : Du mariage, Chapitre VI : Des droits et devoirs, des époux", "regional"],
    ["3", "Le bailleur est tenu de délivrer le bien loué en bon état.", "Code du logement", "1",
     "Titre Ier, Chapitre 1er, Section 2 : Obligations du bailleur, Sous-section 1", "regional"],
    ["4", "Le divorce peut être prononcé pour désunion irrémédiable.", "Code civil", "229", "", "national"],
    ["5", "Le juge statue sur la garde des enfants.", "Code civil", "302", "Livre Ier", "national"],
    ["6", "La pension alimentaire est fixée selon les besoins.", "Code civil", "301", "Livre Ier", "national"],
    ["7", "Les impôts sont payés chaque année.", "Code des impôts", "1", "Titre Ier", "national"],
    ["8", "Le véhicule doit être assuré.", "Code de la route", "12", "", "national"],
]
TRAIN = [
    ["1", "Comment se marier ?", "Famille", "Mariage", "Mariage", "1"],
    ["2", "Quels sont les devoirs des époux ?", "Famille", "Mariage", "", "2"],
    ["3", "Que doit faire le bailleur ?", "Logement", "Location", "", "3"],
    ["4", "Comment divorcer ?", "Famille", "Divorce", "", "4,5"],
    ["5", "Qui paie les impôts ?", "Argent", "Impôts", "", "7"],
]
TEST = [
    ["101", "Mariage et devoirs des époux ?", "Famille", "Mariage", "", "1,2"],
    ["102", "Le bailleur doit-il réparer ?", "Logement", "Location", "", "3"],
    ["103", "Divorce, garde et pension ?", "Famille", "Divorce", "", "4, 5,6"],
]


def write_csv(path, header, rows, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding=encoding, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def bsard_dir(tmp_path):
    root = tmp_path / "bsard"
    write_csv(root / "articles_fr.csv", ARTICLE_HEADER, ARTICLES)
    write_csv(root / "questions_fr_train.csv", QUESTION_HEADER, TRAIN)
    write_csv(root / "questions_fr_test.csv", QUESTION_HEADER, TEST)
    return root


def test_heading_path_is_kept_as_structure(bsard_dir):
    data = Bsard().load(bsard_dir, LOG)
    doc = data.corpus["2"]
    assert doc.text.startswith("Les époux")  # the text is the article alone
    assert doc.title == "Code civil, art. 213"
    # a comma inside a heading does not split it: only a following heading keyword does
    assert doc.fields["heading_path"] == (
        "Code civil › Livre Ier : Des personnes › Titre V : Du mariage › Chapitre VI : Des droits et devoirs, des époux"
    )
    assert doc.fields["book"] == "Livre Ier : Des personnes"
    assert doc.fields["chapter"] == "Chapitre VI : Des droits et devoirs, des époux"
    assert doc.fields["description"].startswith("Livre Ier")
    assert data.corpus["4"].fields["heading_path"] == "Code civil"
    assert heading_fields("Code du logement", ARTICLES[2][4]) == {
        "title": "Titre Ier", "chapter": "Chapitre 1er", "section": "Section 2 : Obligations du bailleur",
        "subsection": "Sous-section 1",
        "heading_path": "Code du logement › Titre Ier › Chapitre 1er › Section 2 : Obligations du bailleur › Sous-section 1",
    }


def test_splits_qrels_and_groups(bsard_dir):
    data = Bsard().load(bsard_dir, LOG)
    assert [s.name for s in data.splits] == ["test"] and [s.name for s in data.extra_splits] == ["dev"]
    test, dev = data.splits[0], data.extra_splits[0]
    assert test.test == ("101", "102", "103")
    assert data.qrels["103"] == {"4": 1, "5": 1, "6": 1}  # spaces around ids are insignificant
    # the dev carve-out: round(5 * 177 / 886) = 1 question, seeded, disjoint from train
    assert len(dev.test) == 1 and len(test.train) == 4 and test.dev == dev.test and dev.train == test.train
    assert sorted(test.train + dev.test) == ["1", "2", "3", "4", "5"]
    seed = Bsard.definition["splits"]["seed"]
    assert (list(test.train), list(dev.test)) == carve_dev(["1", "2", "3", "4", "5"], 177, 886, seed)
    assert data.groups == {"category": {"1": "Famille", "2": "Famille", "3": "Logement", "4": "Famille",
                                        "5": "Argent", "101": "Famille", "102": "Logement", "103": "Famille"}}
    assert data.queries["101"].fields["subcategory"] == "Mariage"
    assert data.dropped == []


def test_dev_carve_out_has_the_gdsr_sizes():
    ids = [str(i) for i in range(1, 887)]
    train, dev = carve_dev(ids, 177, 886, Bsard.definition["splits"]["seed"])
    assert (len(train), len(dev)) == (709, 177)
    assert not set(train) & set(dev)
    assert carve_dev(list(reversed(ids)), 177, 886, Bsard.definition["splits"]["seed"]) == (train, dev)


class Fixed(Retriever):
    """Returns the rankings below, best first (so the expected scores can be worked out by hand)."""

    name = "fixed"
    RANKINGS = {"101": ["1", "7", "2", "8"], "102": ["7", "8", "3"], "103": ["4", "5", "8", "6"]}

    def index(self, corpus, ctx):
        pass

    def search(self, queries, k, ctx):
        return {q.id: [(d, float(10 - i)) for i, d in enumerate(self.RANKINGS.get(q.id, ["8"]))] for q in queries}


class FixedPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Fixed)


def test_fixture_run_matches_hand_computed_scores(bsard_dir, tmp_path):
    out = tmp_path / "out"
    with registered_plugin(FixedPlugin(), "fixed-plugin"):
        result = CliRunner().invoke(cli, ["run", "--task", "bsard", "--model", "fixed", "--data-dir", str(bsard_dir),
                                          "--output", str(out), "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = load_results(out / "results.json")
    per_query = results["per_query"]
    # R-precision: 101 has R=2, top 2 = [1, 7] -> 1/2; 102 has R=1, top 1 = [7] -> 0; 103 has R=3, top 3 = [4, 5, 8] -> 2/3
    assert per_query["101"]["R-precision"] == pytest.approx(1 / 2)
    assert per_query["102"]["R-precision"] == 0.0
    assert per_query["103"]["R-precision"] == pytest.approx(2 / 3)
    assert results["all_queries"]["R-precision"] == pytest.approx((1 / 2 + 0 + 2 / 3) / 3)
    # AP@100: 101 relevant at ranks 1 and 3 -> (1 + 2/3) / 2; 102 at rank 3 -> 1/3; 103 at 1, 2, 4 -> (1 + 1 + 3/4) / 3
    ap = {"101": (1 + 2 / 3) / 2, "102": 1 / 3, "103": (1 + 1 + 3 / 4) / 3}
    for qid, value in ap.items():
        assert per_query[qid]["MAP@100"] == pytest.approx(value)
        assert per_query[qid]["mAP"] == pytest.approx(value)
    assert per_query["102"]["MRR@100"] == pytest.approx(1 / 3)
    assert results["all_queries"]["R@100"] == 1.0
    # per-category breakdown: Famille = {101, 103}, Logement = {102}; Argent has no test question
    breakdown = results["breakdown"]["category"]
    assert sorted(breakdown) == ["Famille", "Logement"]
    assert breakdown["Famille"]["R-precision"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert breakdown["Famille"]["MAP@100"] == pytest.approx((ap["101"] + ap["103"]) / 2)
    assert breakdown["Logement"]["MRR@100"] == pytest.approx(1 / 3)
    assert breakdown["Logement"]["R-precision"] == 0.0
    assert [s["name"] for s in results["splits"]] == ["test"]


def test_dev_split_runs_only_when_named(bsard_dir, tmp_path):
    with registered_plugin(FixedPlugin(), "fixed-plugin"):
        result = CliRunner().invoke(cli, ["run", "--task", "bsard", "--model", "fixed", "--split", "dev",
                                          "--data-dir", str(bsard_dir), "--output", str(tmp_path / "o"),
                                          "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [s["name"] for s in results["splits"]] == ["dev"] and results["splits"][0]["n_queries"] == 1


def test_missing_corpus_names_what_to_fetch_and_where(tmp_path):
    # like the shared bsard_partial folder: a question sample, no corpus
    write_csv(tmp_path / "lexbel_questions_test.csv", QUESTION_HEADER, TEST)
    with pytest.raises(DownloadError) as err:
        Bsard().load(tmp_path, LOG)
    message = str(err.value)
    for name in ("articles_fr.csv", "questions_fr_train.csv", "questions_fr_test.csv"):
        assert f"https://huggingface.co/datasets/maastrichtlawtech/bsard/resolve/main/{name}" in message
        assert f"place it at {tmp_path / name}" in message
    assert "checksum unknown" in message and "--data-dir" in message


def test_missing_column_is_located(bsard_dir):
    write_csv(bsard_dir / "articles_fr.csv", ARTICLE_HEADER[:-1], [a[:-1] for a in ARTICLES])
    with pytest.raises(DataFormatError, match=r"articles_fr\.csv, line 1: missing column\(s\) law_type"):
        Bsard().load(bsard_dir, LOG)


def test_duplicate_article_id_is_an_error(bsard_dir):
    write_csv(bsard_dir / "articles_fr.csv", ARTICLE_HEADER, ARTICLES + [ARTICLES[2]])
    with pytest.raises(DataFormatError) as err:
        Bsard().load(bsard_dir, LOG)
    assert str(err.value) == (f"{bsard_dir / 'articles_fr.csv'}, line 10, field 'id': "
                              "duplicate article id '3' (first on line 4)")


def test_duplicate_question_id_across_files_is_an_error(bsard_dir):
    write_csv(bsard_dir / "questions_fr_test.csv", QUESTION_HEADER, TEST + [["2", "Encore ?", "Famille", "", "", "1"]])
    with pytest.raises(DataFormatError, match=r"questions_fr_test\.csv, line 5, field 'id': duplicate question id '2'"):
        Bsard().load(bsard_dir, LOG)


def test_unknown_articles_and_empty_questions_are_reported_not_hidden(bsard_dir):
    test = TEST + [["104", "   ", "Famille", "", "", "1"], ["105", "Question orpheline ?", "Argent", "", "", "998,999"],
                   ["106", "Une bonne et une inconnue ?", "Argent", "", "", "7,997"]]
    write_csv(bsard_dir / "questions_fr_test.csv", QUESTION_HEADER, test)
    data = Bsard().load(bsard_dir, LOG)
    assert data.dropped == [
        "questions_fr_test.csv line 5: query 104 has no text (empty or white space only): dropped",
        "questions_fr_test.csv: 3 judgement(s) point to documents not in the corpus (e.g. 105->998, 105->999, 106->997)",
        "questions_fr_test.csv: 1 query(ies) without any relevant document in the corpus (e.g. 105)",
    ]
    assert data.splits[0].test == ("101", "102", "103", "106")
    assert data.qrels["106"] == {"7": 1}
    assert "105" not in data.groups["category"]


def test_bad_encoding_names_the_line(bsard_dir):
    path = bsard_dir / "questions_fr_test.csv"
    raw = path.read_bytes().replace("bailleur".encode(), "bailleur é".encode("latin-1"))
    path.write_bytes(raw)
    with pytest.raises(DataFormatError, match=r"questions_fr_test\.csv, line 3: not valid UTF-8"):
        Bsard().load(bsard_dir, LOG)


def test_published_figures_are_fractions_with_sources():
    published = Bsard.definition["published"]
    assert published["BM25 (k1=1.0, b=0.6)"]["scores"]["MAP@100"] == 0.1604
    assert published["G-DSR"]["scores"]["R-precision"] == 0.402
    labels = {m.label for m in Bsard.measures}
    for entry in published.values():
        assert entry["source"].split()[0] in ("bsard-2022", "gdsr-2023") and entry["family"]
        assert set(entry["scores"]) <= labels
        assert all(0 <= v <= 1 for v in entry["scores"].values())
    assert not math.isnan(sum(v for e in published.values() for v in e["scores"].values()))
