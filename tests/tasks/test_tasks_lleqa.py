"""LLeQA: the documented format (JSON list or JSON Lines), BSARD's structure handling,
released splits, strict bad-input handling, download-on-use message, and a BM25 run whose
scores were worked out by hand."""

import json
import logging
import sys
import types

import pytest
from click.testing import CliRunner

from statbench.commands.cli import cli
from statbench.errors import DataFormatError, DownloadError
from statbench.results.record import load_results
from statbench.tasks import belgian, bsard
from statbench.tasks.lleqa import Lleqa

LOG = logging.getLogger("test")

ARTICLES = [
    {"id": 1, "article": "Le mariage est célébré par l'officier de l'état civil.", "code": "Code civil",
     "description": "Livre Ier : Des personnes, Titre V : Du mariage", "reference": "Art. 75, Code civil",
     "paragraphs": {"1": "Le mariage est célébré par l'officier de l'état civil."}},
    {"id": 2, "article": "Le divorce est prononcé par le tribunal de la famille.", "code": "Code civil",
     "description": "Livre Ier : Des personnes, Titre VI : Du divorce, des époux"},
    {"id": 3, "article": "Le bailleur délivre le logement loué en bon état.", "code": "Code bruxellois du logement",
     "description": ""},
    {"id": 4, "article": "La pension alimentaire est due aux enfants.", "code": "Code civil", "description": None,
     "book": "Livre Ier", "chapter": "Chapitre II"},
    {"id": 5, "article": "Le locataire paie le loyer chaque mois.", "code": "Code civil",
     "description": ["Titre III : Du bail", "Chapitre 1er : Obligations, du preneur"]},
    {"id": 6, "article": "Les impôts sont payés chaque année.", "code": "Code des impôts sur les revenus",
     "description": "Titre Ier"},
]


def question(qid, text, article_ids, topics=("Famille", "Mariage")):
    return {"id": qid, "question": text, "answer": "La réponse longue des juristes, jamais lue.",
            "article_ids": article_ids, "regions": ["Bruxelles", "Wallonie"], "topics": list(topics),
            "gold_paragraph_ids": []}


TRAIN = [question(11, "Qui célèbre le mariage ?", [1]), question(12, "Le bailleur doit-il réparer ?", [3], ["Logement"])]
DEV = [question(21, "Quand payer les impôts ?", [6], ["Argent"])]
TEST = [
    question(31, "divorce", [2]),
    question(32, "loyer du logement loué par le bailleur", [5], ["Logement", "Bail"]),
    question(33, "mariage et impôts", [1, 6], ["Argent"]),
]


def write_list(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def write_lines(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def make_lleqa(root, write=write_list, articles=ARTICLES, train=TRAIN, dev=DEV, test=TEST):
    write(root / "articles.json", articles)
    write(root / "questions_train.json", train)
    write(root / "questions_dev.json", dev)
    write(root / "questions_test.json", test)
    return root


@pytest.fixture
def lleqa_dir(tmp_path):
    return make_lleqa(tmp_path / "lleqa")


def load(root):
    return Lleqa().load(root, LOG)


# --- structure, splits, format ------------------------------------------------------------

def test_structure_is_bsards_shared_module():
    assert bsard.heading_fields is belgian.heading_fields  # one concept, one place
    assert belgian.heading_fields("Code civil", ["Titre III : Du bail", " ", "Chapitre 1er : Obligations, du preneur"]) == {
        "title": "Titre III : Du bail", "chapter": "Chapitre 1er : Obligations, du preneur",
        "heading_path": "Code civil › Titre III : Du bail › Chapitre 1er : Obligations, du preneur"}


def test_articles_keep_their_heading_path_as_structure(lleqa_dir):
    corpus = load(lleqa_dir).corpus
    assert corpus["1"].text == "Le mariage est célébré par l'officier de l'état civil."  # the article alone
    assert corpus["1"].title == "Art. 75, Code civil"
    # a comma inside a heading does not split it (BSARD's rule): only a following heading keyword does
    assert corpus["2"].fields["heading_path"] == "Code civil › Livre Ier : Des personnes › Titre VI : Du divorce, des époux"
    assert corpus["2"].fields["book"] == "Livre Ier : Des personnes"
    assert corpus["3"].fields["heading_path"] == "Code bruxellois du logement"
    # no description: the heading levels upstream gives one by one make the path
    assert corpus["4"].fields["heading_path"] == "Code civil › Livre Ier › Chapitre II"
    # a list of headings is taken heading by heading (a comma inside one never splits it)
    assert corpus["5"].fields["chapter"] == "Chapitre 1er : Obligations, du preneur"
    assert corpus["5"].fields["heading_path"] == "Code civil › Titre III : Du bail › Chapitre 1er : Obligations, du preneur"
    assert "paragraphs" not in corpus["1"].fields


def test_released_splits_qrels_and_topics(lleqa_dir):
    data = load(lleqa_dir)
    assert [s.name for s in data.splits] == ["test"] and [s.name for s in data.extra_splits] == ["dev"]
    test, dev = data.splits[0], data.extra_splits[0]
    assert (test.test, test.train, test.dev) == (("31", "32", "33"), ("11", "12"), ("21",))
    assert (dev.test, dev.train) == (("21",), ("11", "12"))
    assert data.qrels["33"] == {"1": 1, "6": 1}
    assert data.groups == {"topic": {"11": "Famille", "12": "Logement", "21": "Argent", "31": "Famille",
                                     "32": "Logement", "33": "Argent"}}
    assert data.queries["32"].fields == {"topics": "Logement › Bail", "regions": "Bruxelles, Wallonie"}
    # the experts' answer is never given to a model, not even as a field
    assert not any("réponse" in value.lower() for q in data.queries.values() for value in q.fields.values())
    assert data.dropped == []


def test_json_lines_and_json_list_are_the_same_data(tmp_path):
    as_list = load(make_lleqa(tmp_path / "list"))
    as_lines = load(make_lleqa(tmp_path / "lines", write=write_lines))
    assert as_lines.corpus == as_list.corpus and as_lines.queries == as_list.queries
    assert as_lines.qrels == as_list.qrels and as_lines.splits == as_list.splits


def test_the_authors_folder_layout_is_found(tmp_path):
    make_lleqa(tmp_path / "data" / "lleqa")
    assert load(tmp_path).splits[0].test == ("31", "32", "33")


# --- end to end -----------------------------------------------------------------------------

def run_cli(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_bm25_run_matches_hand_computed_scores(lleqa_dir, tmp_path):
    out = tmp_path / "out"
    result = run_cli(["run", "--task", "lleqa", "--model", "bm25", "--data-dir", str(lleqa_dir),
                      "--output", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    # BM25 ranks only articles sharing a stem with the question (idf equal: every term is in one article):
    # 31 "divorce" -> [2]; 32 matches 3 on logement/loué/bailleur and 5 on loyer -> [3, 5];
    # 33 matches 6 on impôts and 1 on mariage (6 is shorter) -> [6, 1]
    lines = [line.split() for line in (out / "run.trec").read_text().splitlines()]
    assert [(q, d, int(r)) for q, _, d, r, _, _ in lines] == [
        ("31", "2", 1), ("32", "3", 1), ("32", "5", 2), ("33", "6", 1), ("33", "1", 2)]
    results = load_results(out / "results.json")
    per_query = results["per_query"]
    # 32: its one relevant article (5) at rank 2
    assert per_query["32"]["MRR@10"] == pytest.approx(1 / 2)
    assert per_query["32"]["MAP@100"] == pytest.approx(1 / 2)
    assert per_query["32"]["R-precision"] == 0.0
    assert per_query["32"]["nDCG@10"] == pytest.approx(1 / 1.5849625007211562)  # 1/log2(3)
    # 33: both relevant articles at ranks 1 and 2
    assert per_query["33"]["MAP@100"] == 1.0 and per_query["33"]["R-precision"] == 1.0
    every = results["all_queries"]
    assert every["R@5"] == 1.0 and every["R@500"] == 1.0
    assert every["MRR@10"] == pytest.approx((1 + 1 / 2 + 1) / 3)
    assert every["R-precision"] == pytest.approx(2 / 3)
    assert every["nDCG@10"] == pytest.approx((1 + 1 / 1.5849625007211562 + 1) / 3)
    assert results["breakdown"]["topic"]["Logement"]["MRR@10"] == pytest.approx(1 / 2)
    assert [s["name"] for s in results["splits"]] == ["test"] and results["splits"][0]["n_queries"] == 3
    assert results["task"]["corpus_size"] == 6


def test_dev_split_runs_only_when_named(lleqa_dir, tmp_path):
    result = run_cli(["run", "--task", "lleqa", "--model", "bm25", "--split", "dev", "--data-dir", str(lleqa_dir),
                      "--output", str(tmp_path / "o"), "--no-progress"])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [s["name"] for s in results["splits"]] == ["dev"] and results["splits"][0]["n_queries"] == 1
    assert results["all_queries"]["MRR@10"] == 1.0  # "impôts" is in article 6 only


def test_list_shows_the_task_with_protocols_and_sizes():
    result = run_cli(["list", "tasks"])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("lleqa"))
    assert "test*, dev" in line and "R@100" in line and "27,941" in line
    detail = run_cli(["list", "tasks", "lleqa"]).output
    for shown in ("test*: test (195)", "dev: dev (201)", "train (1472)", "corpus 27,941"):
        assert shown in detail


def test_no_published_figure_is_declared_without_its_source():
    # the paper's table could not be read when the task was written: figures are added only with
    # their source, never from memory; the data they would be compared on is declared already
    assert Lleqa.definition["published"] == {}
    assert Lleqa.definition["published_data"]["corpus_size"] == 27941
    assert Lleqa.definition["published_data"]["queries"] == 195


# --- download on use --------------------------------------------------------------------------

def test_missing_files_say_what_to_fetch_and_where(tmp_path):
    write_list(tmp_path / "questions_test.json", TEST)
    with pytest.raises(DownloadError) as err:
        load(tmp_path)
    message = str(err.value)
    for name in ("articles.json", "questions_train.json", "questions_dev.json"):
        assert f"place it at {tmp_path / name}" in message
    assert "questions_test.json: fetch" not in message  # found, so not asked for
    assert "https://huggingface.co/datasets/maastrichtlawtech/lleqa" in message
    assert "load_dataset('maastrichtlawtech/lleqa', 'corpus', split='corpus')" in message
    assert "split='validation'" in message and "--data-dir" in message


class FakeHubDataset:
    """What ``datasets.load_dataset`` returns, as far as the export uses it."""

    def __init__(self, records):
        self.records = records

    def to_json(self, out, force_ascii=True):
        out.write("".join(json.dumps(r, ensure_ascii=force_ascii) + "\n" for r in self.records).encode())


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    """A hub that answers (the offline probe says so) and serves LLeQA's configurations."""
    import statbench.storage.hub as hub

    served = {("corpus", "corpus"): ARTICLES, ("questions", "train"): TRAIN,
              ("questions", "validation"): DEV, ("questions", "test"): TEST}
    calls = []

    def load_dataset(hub_id, config, split):
        calls.append((hub_id, config, split))
        if (config, split) not in served:
            raise ConnectionError(f"403 Client Error: access to dataset {hub_id} is restricted")
        return FakeHubDataset(served[(config, split)])

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    monkeypatch.setattr(hub, "offline_reason", lambda: None)
    monkeypatch.setenv("STATBENCH_DATA", str(tmp_path / "data"))
    return served, calls


def test_without_data_dir_missing_files_are_exported_from_the_hub(fake_hub, tmp_path):
    served, calls = fake_hub
    data = Lleqa().load(None, LOG)
    assert sorted(calls) == sorted(("maastrichtlawtech/lleqa", c, s) for c, s in served)
    assert data.splits[0].test == ("31", "32", "33") and len(data.corpus) == 6
    assert (tmp_path / "data" / "lleqa" / "questions_dev.json").read_text().startswith('{"id": 21')
    calls.clear()
    Lleqa().load(None, LOG)
    assert calls == []  # found in the data folder: nothing downloaded again


def test_a_hub_refusal_is_said_with_the_missing_files(fake_hub, tmp_path):
    served, calls = fake_hub
    del served[("questions", "validation")]  # gated: as if access to this split were refused
    with pytest.raises(DownloadError) as err:
        Lleqa().load(None, LOG)
    message = str(err.value)
    assert f"questions_dev.json: fetch (no public download; see the task's README) and place it at " \
           f"{tmp_path / 'data' / 'lleqa' / 'questions_dev.json'}" in message
    assert message.endswith("(hub: could not download questions_dev.json from the hub (ConnectionError: 403 Client "
                            "Error: access to dataset maastrichtlawtech/lleqa is restricted); the dataset is gated: "
                            "accept its terms at https://huggingface.co/datasets/maastrichtlawtech/lleqa and log in "
                            "(huggingface-cli login, or HF_TOKEN))")
    assert not list((tmp_path / "data" / "lleqa").glob(".questions_dev*"))  # no half-written file left


def test_with_data_dir_the_hub_is_never_asked(fake_hub, tmp_path):
    _, calls = fake_hub
    with pytest.raises(DownloadError):
        Lleqa().load(tmp_path, LOG)
    assert calls == []


# --- bad input: one line naming the file, the record and the field -----------------------------

def fails(root, match):
    with pytest.raises(DataFormatError, match=match):
        load(root)


def test_duplicate_article_id_names_both_records(tmp_path):
    root = make_lleqa(tmp_path, articles=ARTICLES + [dict(ARTICLES[2], article="Autre texte.")])
    with pytest.raises(DataFormatError) as err:
        load(root)
    assert str(err.value) == (f"{root / 'articles.json'}, field 'id': item 6: duplicate article id '3' (first in item 2) "
                              "(the item starts on line 47)")


def test_duplicate_article_id_in_json_lines_names_the_lines(tmp_path):
    root = make_lleqa(tmp_path, write=write_lines, articles=ARTICLES + [ARTICLES[0]])
    with pytest.raises(DataFormatError) as err:
        load(root)
    assert str(err.value) == f"{root / 'articles.json'}, line 7, field 'id': duplicate article id '1' (first in line 1)"


def test_duplicate_question_id_across_files_is_an_error(tmp_path):
    root = make_lleqa(tmp_path, test=TEST + [question(11, "Encore ?", [1])])
    fails(root, r"questions_test\.json, field 'id': item 3: duplicate question id '11' "
                r"\(first in questions_train\.json item 0\)")


def test_unknown_relevant_ids_and_empty_questions_are_reported_not_hidden(tmp_path):
    test = TEST + [question(34, "   ", [1]), question(35, "Orpheline ?", [998, 999]),
                   question(36, "Une connue et une inconnue ?", [6, 997]), question(37, "\u200b", [2])]
    data = load(make_lleqa(tmp_path, test=test))
    assert data.dropped == [
        "questions_test.json item 3: query 34 has no text (empty or white space only): dropped",
        "questions_test.json item 6: query 37 has no text (white space and invisible characters only, "
        "e.g. U+200B ZERO WIDTH SPACE): dropped",
        "questions_test.json: 3 judgement(s) point to documents not in the corpus (e.g. 35->998, 35->999, 36->997)",
        "questions_test.json: 1 query(ies) without any relevant document in the corpus (e.g. 35)",
    ]
    assert data.splits[0].test == ("31", "32", "33", "36")
    assert data.qrels["36"] == {"6": 1}
    assert "35" not in data.groups["topic"] and "34" not in data.queries


def test_a_question_file_left_with_nothing_to_score_is_an_error(tmp_path):
    fails(make_lleqa(tmp_path, dev=[question(21, "Quoi ?", [404])]),
          r"questions_dev\.json: no judgements left to score")


def test_empty_article_text_is_kept_but_null_is_refused(tmp_path):
    articles = ARTICLES + [{"id": 7, "article": "  ", "code": "Code civil", "description": ""}]
    assert load(make_lleqa(tmp_path / "a", articles=articles)).corpus["7"].text == ""
    fails(make_lleqa(tmp_path / "b", articles=ARTICLES + [{"id": 7, "article": None, "description": ""}]),
          r"field 'article': item 6: expected a string, found null")


@pytest.mark.parametrize("name, content, match", [
    ("articles.json", '[{"id": 1, "article": "a"},\n{"id": 2, "article": "b"', r"articles\.json, line 2: invalid JSON"),
    ("articles.json", '{"id": 1, "article": "a"}\n{"id": 2, "article": \n', r"articles\.json, line 2: invalid JSON"),
    ("articles.json", "", r"articles\.json: no articles \(the file is empty\)"),
    ("articles.json", "[]", r"articles\.json: no documents"),
    ("articles.json", '[{"id": 1, "article": "a"}, [2, "b"]]', r"item 1: expected a JSON object, found a list"),
    ("articles.json", '{"id": 1, "article": "a"}\n[2, "b"]\n', r"line 2: expected a JSON object, found list"),
    ("articles.json", '[{"id": 1}]', r"field 'article': item 0: missing field"),
    ("articles.json", '[{"id": true, "article": "a"}]', r"field 'id': item 0: expected a string or number id, found a boolean"),
    ("articles.json", '[{"id": "1 2", "article": "a"}]', r"article id '1 2' holds white space"),
    ("articles.json", '[{"id": 1, "article": "a", "description": 7}]',
     r"field 'description': item 0: expected a string or a list of strings, found a number"),
    ("articles.json", '[{"id": 1, "article": "a", "code": ["Code civil"]}]',
     r"field 'code': item 0: expected a string or null, found a list"),
    ("questions_test.json", '[{"id": 31, "question": "q"}]', r"field 'article_ids': item 0: missing field"),
    ("questions_test.json", '[{"id": 31, "question": "q", "article_ids": "1,2"}]',
     r"field 'article_ids': item 0: expected a list of article ids, found a string"),
    ("questions_test.json", '[{"id": 31, "question": "q", "article_ids": [1, null]}]',
     r"field 'article_ids': item 0: article_ids\[1\]: expected a string or number id, found null"),
    ("questions_test.json", '[{"id": 31, "question": null, "article_ids": [1]}]',
     r"field 'question': item 0: expected a string, found null"),
    ("questions_test.json", '[{"id": 31, "question": "q", "article_ids": [1], "topics": ["Famille", 3]}]',
     r"field 'topics': item 0: expected a string or a list of strings, found a list holding a number"),
    ("questions_test.json", '[]', r"questions_test\.json: no questions"),
    ("questions_test.json", '[{"id": 31, "question": "q", "article_ids": [1]},\n\ufeff{"id": 32}]', r"line 2: .*byte order mark"),
])
def test_bad_input_is_one_line_naming_file_record_and_field(lleqa_dir, name, content, match):
    (lleqa_dir / name).write_text(content, encoding="utf-8")
    fails(lleqa_dir, match)


def test_bad_encoding_names_the_line(lleqa_dir):
    path = lleqa_dir / "questions_train.json"
    path.write_bytes(path.read_bytes().replace("bailleur".encode(), "bailleur é".encode("latin-1")))
    fails(lleqa_dir, r"questions_train\.json, line \d+: not valid UTF-8")


def test_bad_input_through_the_cli_is_one_line_and_exit_2(lleqa_dir, tmp_path):
    (lleqa_dir / "questions_dev.json").write_text('[{"id": 21, "question": "q", "article_ids": {"6": 1}}]')
    result = CliRunner().invoke(cli, ["run", "--task", "lleqa", "--model", "bm25", "--data-dir", str(lleqa_dir),
                                      "--output", str(tmp_path / "o"), "--no-progress"])
    assert result.exit_code == 2
    assert "expected a list of article ids, found an object" in result.output
    assert not (tmp_path / "o").exists()
