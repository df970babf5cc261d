"""A git source names a URL any stranger can fetch, and never a credential: a token put in
a remote as its user name (``https://TOKEN@github.com/...``, how a personal access token is
commonly used) is a credential just as ``user:password`` is, so ``submit`` stores a wheel
instead of publishing it, and a source.json that names one is refused in one line. A
``file://`` URL is a path on the submitter's machine: no stranger can fetch it. Over ssh
the user name (``git@``) is who logs in, and stays."""

from __future__ import annotations

import json

import pytest
from source_fixtures import editable, find, git_repo, index, install, site  # noqa: F401 (fixtures)

from statbench.errors import DataFormatError
from statbench.leaderboard.repo.source import SOURCE_FILE, git_url_problem, read_source

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("url", [
    "https://ghp_0123456789abcdefABCDEF@github.com/sb/plug.git",
    "http://token@example.org/sb/plug.git",
    "git://token@example.org/sb/plug.git",
    "https://user:secret@example.org/sb/plug.git",
])
def test_a_url_with_a_credential_is_not_a_published_source(url):
    assert git_url_problem(url) == "holds a password or token (a published source names no credentials)"


@pytest.mark.parametrize("url", ["file:///home/ada/plug", "file://localhost/home/ada/plug"])
def test_a_local_path_is_not_a_published_source(url):
    assert git_url_problem(url).startswith("scheme 'file'")


@pytest.mark.parametrize("url", ["ssh://git@example.org/sb/plug.git", "https://example.org/sb/plug.git"])
def test_a_fetchable_url_is_one(url):
    assert git_url_problem(url) is None


def test_a_source_file_naming_a_token_is_refused_without_repeating_the_url_elsewhere(tmp_path):
    entry = {"name": "sb-git-plug", "version": "2.0", "kind": "git", "commit": COMMIT, "subdirectory": None,
             "url": "https://ghp_secret@github.com/sb/plug.git"}
    (tmp_path / SOURCE_FILE).write_text(json.dumps({"format": 1, "statbench": "0.1.0", "distributions": [entry]}),
                                        encoding="utf-8")
    with pytest.raises(DataFormatError) as info:
        read_source(tmp_path)
    assert "holds a password or token" in str(info.value) and "\n" not in str(info.value)


def test_submit_does_not_publish_a_remote_holding_a_token(site, index, tmp_path, monkeypatch):  # noqa: F811
    from source_fixtures import MODULE, _wheel_of

    from statbench.leaderboard.repo.source_finder import SourceFinder

    project, _ = git_repo(tmp_path, remote="https://ghp_secret0123@github.com/sb/plug.git")
    monkeypatch.setattr(SourceFinder, "_build_wheel", lambda self, folder, name, version: (
        _wheel_of(self._fresh_dir(name), version, {f"{MODULE}/__init__.py": b"SCORE = 1\n"}), ""))
    editable(site, project)
    found = find(tmp_path, index)
    (dist,) = found.record.distributions
    assert dist.kind == "wheel" and "has no URL a stranger can fetch" in found.notes[0]
    assert "ghp_secret0123" not in json.dumps(found.notes) + json.dumps(found.record.to_json())
