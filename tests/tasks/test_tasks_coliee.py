"""COLIEE Task 3: the organisers' Civil Code text and riteval XML files (tiny fixtures
written here in their format), strict reading, yearly protocols, the official F2 and its
"F2 of mean P and R" variant."""

import json
import logging

import pytest
from click.testing import CliRunner

from statbench import hookimpl
from statbench.api import Retriever
from statbench.commands.cli import cli
from statbench.errors import DataFormatError, DownloadError, StatbenchError
from statbench.results.record import load_results
from statbench.scoring.measures import parse_measure
from statbench.scoring.measures.fbeta import FBeta
from statbench.scoring.measures.fbeta_of_means import (
    SetFBeta,
    SetPrecision,
    SetRecall,
    fbeta_of_means,
    fbeta_of_means_from_results,
)
from statbench.tasks.coliee import Coliee, ColieeNoCaptions, year_order
from statbench.testing import check_task, registered_plugin
from coliee_fixtures import CODE, YEARS, coliee_dir, default_pairs, pair, write_year, year_file  # noqa: F401 - the fixture

LOG = logging.getLogger("test")


def test_civil_code_articles_captions_headings_and_deleted_articles(coliee_dir):
    data = Coliee().load(coliee_dir, LOG)
    assert sorted(data.corpus, key=lambda n: [int(x) for x in n.split("-")]) == ["1", "1-2", "4", "22", "176", "179"]
    first = data.corpus["1"]
    assert first.text == ("(Fundamental Principles)\nArticle 1  (1) Private rights must be congruent with the public "
                          "welfare.\n(2) The exercise of rights and performance of duties must be done in good faith.")
    assert first.title == "Civil Code, Article 1"
    assert first.fields == {"code": "Civil Code", "article_no": "1", "part": "Part I General Provisions",
                            "chapter": "Chapter I Common Provisions", "caption": "(Fundamental Principles)",
                            "heading_path": "Civil Code › Part I General Provisions › Chapter I Common Provisions"}
    assert data.corpus["1-2"].text.startswith("Article 1-2  This Code") and "caption" not in data.corpus["1-2"].fields
    domicile = data.corpus["22"]
    assert domicile.text.endswith("(i) for a minor, the domicile of the guardian;\n(ii) otherwise, where the person lives.")
    assert domicile.fields["heading_path"] == ("Civil Code › Part I General Provisions › Chapter II Persons › "
                                              "Section 2 Domicile › Subsection 1 General Rules")
    # a new Part resets the levels below it
    assert data.corpus["176"].fields["heading_path"] == "Civil Code › Part II Real Rights › Chapter I General Provisions"
    assert "section" not in data.corpus["176"].fields
    assert data.dropped == [
        "civil_code_en-1to724-2.txt line 12: Articles 5 to 7 (3 articles) deleted: not in the corpus",
        "civil_code_en-1to724-2.txt line 20: Article 23 deleted, with its caption '(Residence Deleted Long Ago)': "
        "not in the corpus",
        "civil_code_en-1to724-2.txt line 25: Articles 177 and 178 (2 articles) deleted: not in the corpus",
    ]


def test_without_captions_the_texts_lose_them_and_nothing_else_changes(coliee_dir):
    with_captions, without = Coliee().load(coliee_dir, LOG), ColieeNoCaptions().load(coliee_dir, LOG)
    assert list(without.corpus) == list(with_captions.corpus)
    assert without.corpus["1"].text.startswith("Article 1  (1) Private rights")
    assert "caption" not in without.corpus["1"].fields
    assert without.qrels == with_captions.qrels and without.splits == with_captions.splits
    assert ColieeNoCaptions.task_info().name == "coliee-nocaptions"
    assert ColieeNoCaptions.task_info().protocols == Coliee.task_info().protocols


def test_yearly_splits_qrels_and_queries(coliee_dir):
    data = Coliee().load(coliee_dir, LOG)
    assert [s.name for s in data.splits] == ["R05"]  # the default protocol
    # the COLIEE test years are protocols; H18–H29 are training years only
    assert sorted((s.name for s in data.extra_splits), key=year_order) == ["H30", "R01", "R02", "R03", "R04"]
    r05 = data.splits[0]
    assert r05.test == ("R05-1-A", "R05-2-I", "R05-3-U")
    assert r05.dev == ("R04-1-A", "R4-2-E")  # the year before
    assert r05.train == tuple(f"{y}-1-A" for y in YEARS[:-2])  # every earlier year
    h30 = next(s for s in data.extra_splits if s.name == "H30")
    assert (h30.test, h30.dev, h30.train) == (("H30-1-A",), ("H29-1-A",), tuple(f"{y}-1-A" for y in YEARS[:11]))
    # "Article 4 text" and "Article 22(1) text" lines of <t1> both name their article
    assert data.qrels["R05-2-I"] == {"4": 1, "22": 1}
    assert data.qrels["R4-2-E"] == {"1-2": 1}
    assert data.queries["R05-2-I"].text == "A minor who is eighteen years of age has a domicile."
    assert data.queries["R05-2-I"].fields == {"year": "R05"}  # the entailment label is never read
    check_task(Coliee, coliee_dir)


class Fixed(Retriever):
    """Fixed rankings, so that every figure can be worked out by hand."""

    name = "fixed-coliee"
    RANKINGS = {"R05-1-A": ["176", "179", "1"], "R05-2-I": ["4", "1", "22"], "R05-3-U": ["1", "176", "4"]}

    def index(self, corpus, ctx):
        pass

    def search(self, queries, k, ctx):
        return {q.id: [(d, float(10 - i)) for i, d in enumerate(self.RANKINGS.get(q.id, ["1"]))] for q in queries}


class FixedPlugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Fixed)


def test_run_scores_the_official_f2_by_hand_and_lists_the_dropped_articles(coliee_dir, tmp_path):
    out = tmp_path / "out"
    with registered_plugin(FixedPlugin(), "fixed-coliee-plugin"):
        result = CliRunner().invoke(cli, ["run", "--task", "coliee", "--model", "fixed-coliee", "--data-dir",
                                          str(coliee_dir), "--output", str(out), "--no-progress"],
                                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = load_results(out / "results.json")
    assert results["task"]["protocol"] == "R05" and results["task"]["name"] == "coliee"
    assert len(results["task"]["dropped"]) == 3
    run_log = (out / "run.log").read_text()
    assert "Articles 5 to 7 (3 articles) deleted: not in the corpus" in run_log
    q = results["per_query"]
    # F2@1: 1-A hit (1); 2-I top 1 = [4]: P=1, R=1/2 -> 5·½/(4+½) = 5/9; 3-U miss (0)
    assert q["R05-1-A"]["F2@1"] == 1.0 and q["R05-3-U"]["F2@1"] == 0.0
    assert q["R05-2-I"]["F2@1"] == pytest.approx(5 / 9)
    assert results["all_queries"]["F2@1"] == pytest.approx((1 + 5 / 9 + 0) / 3)
    # F2@2: 1-A P=½ R=1 -> 5/6; 2-I P=½ R=½ -> ½; 3-U P=0 -> 0
    assert results["all_queries"]["F2@2"] == pytest.approx((5 / 6 + 1 / 2 + 0) / 3)
    # MAP@100: 1-A 1; 2-I (1 + 2/3)/2; 3-U none of 179 in the top 3 -> 0
    assert results["all_queries"]["MAP@100"] == pytest.approx((1 + 5 / 6 + 0) / 3)
    assert results["all_queries"]["MRR@100"] == pytest.approx((1 + 1 + 0) / 3)
    # the variant from the recorded parts: P̄@1 = 2/3, R̄@1 = (1 + ½ + 0)/3 = ½
    scores = results["all_queries"]
    assert scores["SetPrec@1"] == pytest.approx(2 / 3) and scores["R@1"] == pytest.approx(1 / 2)
    variant = fbeta_of_means_from_results(scores, "SetPrec@1", "R@1")
    assert variant == pytest.approx(5 * (2 / 3) * (1 / 2) / (4 * (2 / 3) + 1 / 2))
    assert variant != pytest.approx(scores["F2@1"])  # the two figures differ: never one in place of the other


def test_another_year_is_a_protocol(coliee_dir, tmp_path):
    with registered_plugin(FixedPlugin(), "fixed-coliee-plugin"):
        result = CliRunner().invoke(cli, ["run", "--task", "coliee", "--model", "fixed-coliee", "--protocol", "R04",
                                          "--data-dir", str(coliee_dir), "--output", str(tmp_path / "o"),
                                          "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [(s["name"], s["n_queries"]) for s in results["splits"]] == [("R04", 2)]


# --- bad input: one line, exit code 2 ------------------------------------------------

def run_fails(coliee_dir, tmp_path) -> str:
    result = CliRunner().invoke(cli, ["run", "--task", "coliee", "--model", "bm25", "--data-dir", str(coliee_dir),
                                      "--output", str(tmp_path / "bad"), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "bad").exists()
    return result.output


def test_malformed_xml_names_file_and_line(coliee_dir, tmp_path):
    text = year_file("R05", default_pairs("R05")).replace("</t2>\n</pair>", "</t2>\n</pear>", 1)
    path = write_year(coliee_dir, "R05", text)
    with pytest.raises(DataFormatError, match=r"riteval_R05_en\.xml, line 10: malformed XML: mismatched tag"):
        Coliee().load(coliee_dir, LOG)
    assert f"{path}, line 10: malformed XML" in run_fails(coliee_dir, tmp_path)


def test_unknown_and_deleted_articles_in_a_query_are_refused(coliee_dir, tmp_path):
    write_year(coliee_dir, "R05", year_file("R05", [pair("R05-1-A", ["176", "999"], "Unknown article.")]))
    with pytest.raises(DataFormatError) as err:
        Coliee().load(coliee_dir, LOG)
    assert str(err.value) == (f"{coliee_dir / 'riteval_R05_en.xml'}, line 6, field 't1': pair 'R05-1-A': relevant "
                              "article 999 is not in civil_code_en-1to724-2.txt")
    assert "relevant article 999 is not in" in run_fails(coliee_dir, tmp_path)
    write_year(coliee_dir, "R05", year_file("R05", [pair("R05-1-A", ["6"], "A deleted article.")]))
    with pytest.raises(DataFormatError, match=r"relevant article 6 is deleted \(line 12 of civil_code"):
        Coliee().load(coliee_dir, LOG)


def test_duplicate_ids_are_refused(coliee_dir):
    write_year(coliee_dir, "R05", year_file("R05", [pair("R05-1-A", ["176"], "One."), pair("R05-1-A", ["4"], "Two.")]))
    with pytest.raises(DataFormatError, match=r"riteval_R05_en\.xml, line 12, field 'id': duplicate pair id "
                                              r"'R05-1-A' \(first in riteval_R05_en\.xml line 3\)"):
        Coliee().load(coliee_dir, LOG)
    # across years: a statement cannot be tested in one year and trained on in another
    write_year(coliee_dir, "R05", year_file("R05", [pair("R04-1-A", ["176"], "Again.")]))
    with pytest.raises(DataFormatError, match=r"duplicate pair id 'R04-1-A' \(first in riteval_R04_en\.xml line 3\)"):
        Coliee().load(coliee_dir, LOG)


def test_duplicate_article_numbers_are_refused(coliee_dir):
    path = coliee_dir / "text" / "civil_code_en-1to724-2.txt"
    path.write_text(CODE + "Article 4  Again.\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"line 28: duplicate article 4 \(first on line 11\)"):
        Coliee().load(coliee_dir, LOG)
    path.write_text(CODE + "Article 6  Revived.\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"line 28: duplicate article 6 \(first on line 12\)"):
        Coliee().load(coliee_dir, LOG)


@pytest.mark.parametrize("bad, message", [
    ("(Orphan Caption)\nPart III Claims\n", r"line 29: caption '\(Orphan Caption\)' \(line 28\) is not followed by an article"),
    ("Article seven  No number.\n", r"line 28: line starts with 'Article' but is not"),
    ("Articles 9 to 8  Deleted\n", r"line 28: cannot read the deleted range 9 to 8"),
])
def test_civil_code_lines_are_read_strictly(coliee_dir, bad, message):
    (coliee_dir / "text" / "civil_code_en-1to724-2.txt").write_text(CODE + bad, encoding="utf-8")
    with pytest.raises(DataFormatError, match=message):
        Coliee().load(coliee_dir, LOG)


def test_text_before_any_article_is_refused(coliee_dir):
    (coliee_dir / "text" / "civil_code_en-1to724-2.txt").write_text("Civil Code\nstray words\n" + CODE.lstrip("\ufeff"),
                                                                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"line 2: text outside any article: 'stray words'"):
        Coliee().load(coliee_dir, LOG)


@pytest.mark.parametrize("body, message", [
    ('<pair id="R05-1-A"><t1>Article 176 x</t1></pair>', r"line 3, field 't2': pair 'R05-1-A' has no <t2>"),
    ('<pair id="R05-1-A"><t1>Article 176 x</t1><t2>a</t2><t2>b</t2></pair>', r"field 't2': pair 'R05-1-A' has two <t2>"),
    ('<pair id="R05-1-A"><t1>Article 176 x</t1><t2>a</t2><t3/></pair>', r"unexpected element <t3> inside <pair>"),
    ('<pair label="Y"><t1>Article 176 x</t1><t2>a</t2></pair>', r"field 'id': <pair> without an id attribute"),
    ('<pair id="R05 1"><t1>Article 176 x</t1><t2>a</t2></pair>', r"pair id 'R05 1' holds white space"),
    ('<pair id="R05-1-A"><t1>no article here</t1><t2>a</t2></pair>', r"<t1> names no article"),
    ('', r"no <pair> \(the file holds no statement\)"),
])
def test_riteval_structure_is_read_strictly(coliee_dir, body, message):
    write_year(coliee_dir, "R05", f'<?xml version="1.0"?>\n<dataset>\n{body}\n</dataset>\n')
    with pytest.raises(DataFormatError, match=message):
        Coliee().load(coliee_dir, LOG)


def test_a_doctype_is_refused(coliee_dir):
    write_year(coliee_dir, "R05", '<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY a "aaaa">]>\n<dataset>'
               '<pair id="x"><t1>Article 176 &a;</t1><t2>q</t2></pair></dataset>\n')
    with pytest.raises(DataFormatError, match=r"a DOCTYPE is not accepted"):
        Coliee().load(coliee_dir, LOG)


def test_an_empty_statement_is_dropped_and_listed(coliee_dir):
    write_year(coliee_dir, "R05", year_file("R05", default_pairs("R05") + [pair("R05-9-O", ["4"], "   ")]))
    data = Coliee().load(coliee_dir, LOG)
    assert "R05-9-O" not in data.queries and "R05-9-O" not in data.splits[0].test
    assert data.dropped[-1] == "riteval_R05_en.xml line 35: query R05-9-O has no text (empty or white space only): dropped"


def test_missing_files_say_how_to_obtain_them_and_where(coliee_dir, tmp_path):
    (coliee_dir / "train" / "riteval_R02_en.xml").unlink()
    with pytest.raises(DownloadError) as err:
        Coliee().load(coliee_dir, LOG)
    message = str(err.value)
    assert "riteval_R02_en.xml: fetch (no public download" in message
    assert f"place it at {coliee_dir / 'riteval_R02_en.xml'}" in message
    assert "riteval_R03_en.xml" not in message  # only what is missing
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DownloadError) as err:
        Coliee().load(empty, LOG)
    assert "https://coliee.org" in str(err.value) and "--data-dir" in str(err.value)
    assert str(err.value).count("place it at") == 1 + len(YEARS)


def test_declaration_protocols_and_no_unsourced_figures():
    info = Coliee.task_info()
    assert info.default_protocol == "R05" and info.primary_measure == "F2@1"
    assert [p.name for p in info.protocols] == ["R05", "R04", "R03", "R02", "R01", "H30"]
    assert all(p.splits == (p.name,) for p in info.protocols)
    assert info.sizes["R05"] == 109 and info.sizes["corpus"] == 768
    assert info.published == ()  # no overview-paper figure could be cited: none is declared
    assert info.depth >= 100


# --- the measures ---------------------------------------------------------------------

RANKING = [("a", 9.0), ("b", 5.0), ("c", 2.5), ("d", 1.0)]
QRELS = {"a": 1, "c": 1, "e": 1, "b": 0}


def test_set_measures_and_threshold_by_hand():
    p, r, f = SetPrecision(), SetRecall(), SetFBeta()
    # top 2 = {a, b}: 1 hit of 2 returned, 3 relevant
    assert p.per_query(RANKING, QRELS, rel=1, cutoff=2, min_score=-1e308) == 0.5
    assert r.per_query(RANKING, QRELS, rel=1, cutoff=2, min_score=-1e308) == pytest.approx(1 / 3)
    # a score threshold of 2.5 returns {a, b, c}: 2 hits of 3, recall 2/3
    assert p.per_query(RANKING, QRELS, rel=1, cutoff=None, min_score=2.5) == pytest.approx(2 / 3)
    assert f.per_query(RANKING, QRELS, beta=2.0, rel=1, cutoff=None, min_score=2.5) == pytest.approx(2 / 3)
    # without a threshold SetFbeta is F
    for k in (1, 2, 3, None):
        assert f.per_query(RANKING, QRELS, beta=2.0, rel=1, cutoff=k, min_score=-1.7976931348623157e308) == \
            FBeta().per_query(RANKING, QRELS, beta=2.0, rel=1, cutoff=k)
    # a threshold no document reaches returns nothing: every set measure is 0
    assert p.per_query(RANKING, QRELS, rel=1, cutoff=3, min_score=100.0) == 0.0
    assert f.per_query(RANKING, QRELS, beta=2.0, rel=1, cutoff=3, min_score=100.0) == 0.0
    # both: the top 1 above 2.5
    assert r.per_query(RANKING, QRELS, rel=1, cutoff=1, min_score=2.5) == pytest.approx(1 / 3)


def test_measure_strings_keep_their_spelling():
    assert str(parse_measure("SetFbeta2@3")) == "SetFbeta(beta=2.0)@3"  # min_score at its default is not spelled
    assert str(parse_measure("SetFbeta(beta=2,min_score=1.5)@10")) == "SetFbeta(beta=2.0,min_score=1.5)@10"
    assert str(parse_measure("SetPrec@1")) == "SetPrec@1"
    with pytest.raises(StatbenchError, match="min_score"):
        parse_measure("SetPrec(min_score='high')@1")


def test_fbeta_of_means_is_not_the_mean_of_f2():
    # two queries: (P, R) = (1, 1) and (0.2, 1) -> mean F2 = (1 + 5·0.2/(0.8+1))/2; F2 of means from P̄=0.6, R̄=1
    per_query_f2 = [1.0, 5 * 0.2 / (4 * 0.2 + 1)]
    assert fbeta_of_means(0.6, 1.0) == pytest.approx(5 * 0.6 / (4 * 0.6 + 1))
    assert fbeta_of_means(0.6, 1.0) != pytest.approx(sum(per_query_f2) / 2)
    assert fbeta_of_means(0.0, 0.0) == 0.0
    with pytest.raises(StatbenchError, match=r"mean recall 1\.5 is not in \[0, 1\]"):
        fbeta_of_means(0.5, 1.5)
    with pytest.raises(StatbenchError, match=r"no recorded mean for 'SetPrec@2'"):
        fbeta_of_means_from_results({"R@2": 0.5}, "SetPrec@2", "R@2")
