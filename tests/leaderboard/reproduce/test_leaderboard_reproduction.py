"""A leaderboard row links to the reproduction file beside its results, or reports why not."""

from pathlib import Path

from statbench.scoring.reproduction import copy_reproduction, link_name


def test_the_copy_is_named_by_checksum_and_keeps_the_bytes(tmp_path):
    cell = tmp_path / "in" / "stard" / "bm25"
    cell.mkdir(parents=True)
    (cell / "results.json").write_text("{}")
    (cell / link_name(Path("reproductions/lexical.yaml"))).write_bytes(b"name: lexical\n")
    link, problem = copy_reproduction(cell / "results.json", tmp_path / "site")
    assert problem is None and link.name == "lexical.yaml"
    assert link.href.startswith("reproductions/") and link.href.endswith("-lexical.yaml")
    assert (tmp_path / "site" / link.href).read_bytes() == b"name: lexical\n"


def test_no_file_no_link_and_no_problem(tmp_path):
    (tmp_path / "results.json").write_text("{}")
    assert copy_reproduction(tmp_path / "results.json", tmp_path / "site") == (None, None)


def test_two_candidates_or_a_link_are_reported_not_guessed(tmp_path):
    (tmp_path / "results.json").write_text("{}")
    (tmp_path / "reproduction-a.yaml").write_text("a")
    (tmp_path / "reproduction-b.yaml").write_text("b")
    link, problem = copy_reproduction(tmp_path / "results.json", tmp_path / "site")
    assert link is None and problem.startswith("2 reproduction files beside")
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.json").write_text("{}")
    (other / "reproduction-a.yaml").symlink_to(tmp_path / "reproduction-a.yaml")
    link, problem = copy_reproduction(other / "results.json", tmp_path / "site")
    assert link is None and "is not a regular file" in problem
    assert not (tmp_path / "site" / "reproductions").exists()
