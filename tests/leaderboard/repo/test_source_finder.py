"""Where `submit` finds a plugin's code (statbench.leaderboard.repo.source_finder): the index only
for a release installed from it, unedited, and listed there (one bounded request to a local
PEP 503/691 server); a git commit for a clean, pushed editable work tree or a VCS install;
otherwise a wheel built from the folder or rebuilt faithfully from the installed files; and
"source not published" with its reason when none of these can be had. A run made by another
version than the one installed is refused."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from source_fixtures import (  # noqa: F401 (fixtures)
    MODULE,
    NAME,
    VERSION,
    _Run,
    _wheel_of,
    editable,
    find,
    git,
    git_repo,
    index,
    install,
    plugin_project,
    record_hash,
    run_of,
    site,
)

from statbench.leaderboard.repo.source import wheel_metadata_problem
from statbench.leaderboard.repo.source_finder import SourceError, SourceFinder
from statbench.results.record import PluginRecord

# --- the index ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["html", "json"])
def test_an_unedited_release_the_index_lists_is_recorded_as_on_the_index(site, index, tmp_path, mode):
    install(site)
    index.mode = mode
    index.files["sb-fake-plug"] = ["sb_fake_plug-0.9-py3-none-any.whl", "sb_fake_plug-1.0-py3-none-any.whl",
                                   "sb-fake-plug-1.0.tar.gz"]
    found = find(tmp_path, index)
    (dist,) = found.record.distributions
    assert (dist.name, dist.version, dist.kind) == (NAME, VERSION, "index") and found.wheels == {}
    assert index.requests == ["/simple/sb-fake-plug/"]  # one request, the canonical name
    assert found.notes == [f"sb-fake-plug 1.0: on the index {index.url} (pip install sb-fake-plug==1.0)"]


def test_each_distribution_is_asked_for_once_per_submit(site, index, tmp_path):
    install(site)
    index.files["sb-fake-plug"] = ["sb-fake-plug-1.0.tar.gz"]
    finder = SourceFinder(tmp_path, index_url=index.url)
    first, second = finder.sources_of(run_of()), finder.sources_of(run_of())
    assert first.record == second.record and len(index.requests) == 1


def _assert_rebuilt_wheel(found, why: str):
    (dist,) = found.record.distributions
    assert dist.kind == "wheel" and dist.file == "sb_fake_plug-1.0-py3-none-any.whl"
    wheel = found.wheels[dist.file]
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == dist.sha256
    assert wheel_metadata_problem(wheel, NAME, VERSION) is None
    names = zipfile.ZipFile(wheel).namelist()
    assert f"{MODULE}/__init__.py" in names and f"{MODULE}/data.json" in names
    assert not any(n.endswith(("INSTALLER", "direct_url.json")) for n in names)  # an installer's, not the wheel's
    assert zipfile.ZipFile(wheel).read(f"{MODULE}/__init__.py") == b"SCORE = 1\n"
    assert why in found.notes[0] and "rebuilt from the installed files" in found.notes[0]


@pytest.mark.parametrize(("listed", "mode", "why"), [
    (["sb_fake_plug-0.9-py3-none-any.whl"], "html", "1.0 is not on the index"),
    (None, "html", "not on the index"),
    (["sb_fake_plug-1.0-py3-none-any.whl"], "500", "answered 500: not known to be on it"),
])
def test_a_release_the_index_does_not_list_is_stored_as_a_wheel_of_the_installed_files(site, index, tmp_path, listed,
                                                                                      mode, why):
    install(site)
    index.mode = mode
    if listed is not None:
        index.files["sb-fake-plug"] = listed
    _assert_rebuilt_wheel(find(tmp_path, index), why)


def test_an_index_that_does_not_answer_in_time_is_not_taken_as_listing_it(site, index, tmp_path):
    install(site)
    index.mode = "hang"
    found = find(tmp_path, index, timeout=0.3)
    _assert_rebuilt_wheel(found, f"no answer from the index {index.url}")
    assert "not known to be on it" in found.notes[0]


def test_the_rebuilt_wheel_is_byte_identical_each_time_and_pip_installs_it(site, index, tmp_path):
    install(site)
    one, two = find(tmp_path, index), find(tmp_path, index)
    assert one.record == two.record  # same files, same bytes: a resubmission is recognised
    wheel = next(iter(one.wheels.values()))
    target = tmp_path / "target"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile",
                           "--disable-pip-version-check", "-q", "--target", str(target), str(wheel)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (target / MODULE / "__init__.py").read_bytes() == b"SCORE = 1\n"
    assert (target / "sb_fake_plug-1.0.dist-info" / "METADATA").is_file()


def test_a_local_install_of_a_listed_version_is_not_the_release(site, index, tmp_path):
    """pip install ./folder of version 1.0 while 1.0 is on the index: the code that ran is the
    folder's, so the index is not even asked."""
    install(site, direct_url={"url": f"file://{tmp_path}/somewhere", "dir_info": {}})
    index.files["sb-fake-plug"] = ["sb_fake_plug-1.0-py3-none-any.whl"]
    found = find(tmp_path, index)
    _assert_rebuilt_wheel(found, "installed from a local folder")
    assert index.requests == []


def test_an_installed_file_edited_after_install_is_not_published(site, index, tmp_path):
    install(site)
    index.files["sb-fake-plug"] = ["sb_fake_plug-1.0-py3-none-any.whl"]
    (site / MODULE / "__init__.py").write_bytes(b"SCORE = 2\n")  # edited in site-packages
    found = find(tmp_path, index)
    (dist,) = found.record.distributions
    assert dist.kind == "none" and dist.reason == (f"installed files differ from what was installed "
                                                   f"({MODULE}/__init__.py was edited)")
    assert found.notes[0].startswith("sb-fake-plug 1.0: source not published (installed files differ")


def test_files_installed_outside_site_packages_are_not_rebuilt_into_a_wheel(site, index, tmp_path):
    install(site, extra_record=[("../../share/sb/data.txt", record_hash(b"x"), "1")])
    dist = find(tmp_path, index).record.distributions[0]
    assert dist.kind == "none" and "../../share/sb/data.txt is installed outside site-packages" in dist.reason


def test_tags_that_are_no_product_cannot_name_a_rebuilt_wheel(site, index, tmp_path):
    install(site, tags=("py3-none-any", "cp311-cp311-linux_x86_64"))
    dist = find(tmp_path, index).record.distributions[0]
    assert dist.kind == "none" and "names no tags statbench can put in a file name" in dist.reason


def test_compatible_tags_are_compressed_into_the_wheel_name(site, index, tmp_path):
    install(site, tags=("py2-none-any", "py3-none-any"))
    dist = find(tmp_path, index).record.distributions[0]
    assert dist.file == "sb_fake_plug-1.0-py2.py3-none-any.whl"


# --- versions -----------------------------------------------------------------------------------------

def test_a_run_made_by_another_version_than_installed_is_refused(site, index, tmp_path):
    install(site, version="1.1")
    with pytest.raises(SourceError, match=r"^the run used sb-fake-plug 1.0 but 1.1 is installed here: the run was "
                                          r"made by another version"):
        find(tmp_path, index)


def test_a_plugin_not_installed_here_is_refused(site, index, tmp_path):
    with pytest.raises(SourceError, match="^the run used sb-absent-plug 1.0, which is not installed here"):
        find(tmp_path, index, run_of(name="sb-absent-plug"))


def test_a_plugin_registered_in_process_is_accepted_as_not_published(tmp_path, index):
    run = _Run(PluginRecord(name="tests.plugin:thing", distribution=None, version=None))
    (dist,) = find(tmp_path, index, run).record.distributions
    assert (dist.name, dist.version, dist.kind) == ("tests.plugin-thing", "", "none")
    assert "registered in-process" in dist.reason and index.requests == []


def test_statbench_itself_needs_no_entry(tmp_path, index):
    run = _Run(PluginRecord(name="bm25", distribution="statbench", version="0.1.0"))
    assert find(tmp_path, index, run).record.distributions == ()


# --- git and folders ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sub", [None, "plugins/fake"])
def test_an_editable_install_from_a_clean_pushed_work_tree_is_its_git_commit(site, index, tmp_path, sub):
    project, commit = git_repo(tmp_path, sub)
    editable(site, project)
    found = find(tmp_path, index)
    (dist,) = found.record.distributions
    assert (dist.kind, dist.url, dist.commit, dist.subdirectory) == ("git", "https://example.org/sb/plug.git",
                                                                     commit, sub)
    assert found.wheels == {} and index.requests == []  # a local folder is never taken for the release


def test_an_scp_style_remote_is_recorded_as_an_ssh_url(site, index, tmp_path):
    project, _ = git_repo(tmp_path, remote="git@example.org:sb/plug.git")
    editable(site, project)
    assert find(tmp_path, index).record.distributions[0].url == "ssh://git@example.org/sb/plug.git"


@pytest.mark.parametrize(("spoil", "why"), [
    ("dirty", "its folder has uncommitted changes"),
    ("untracked", "its folder has uncommitted changes"),
    ("unpushed", "is on no remote branch (not pushed)"),
    ("token", "has no URL a stranger can fetch"),
])
def test_an_editable_work_tree_that_is_not_its_commit_is_stored_as_a_wheel_built_from_it(site, index, tmp_path,
                                                                                        monkeypatch, spoil, why):
    remote = "https://user:secret@example.org/sb/plug.git" if spoil == "token" else "https://example.org/sb/plug.git"
    project, _ = git_repo(tmp_path, remote=remote, pushed=spoil != "unpushed")
    if spoil == "dirty":  # an edit and a new file: what is in the folder, committed or not
        (project / MODULE / "__init__.py").write_text("SCORE = 2\n")
        (project / MODULE / "extra.py").write_text("X = 1\n")
    else:  # the reason is what is tested: a pip build is tested once, with the dirty tree
        if spoil == "untracked":
            (project / MODULE / "extra.py").write_text("X = 1\n")
        monkeypatch.setattr(SourceFinder, "_build_wheel", lambda self, folder, name, version: (
            _wheel_of(self._fresh_dir(name), version, {f"{MODULE}/__init__.py": b"SCORE = 1\n"}), ""))
    editable(site, project)
    before = sorted(p.name for p in project.iterdir())
    found = find(tmp_path, index)
    (dist,) = found.record.distributions
    assert dist.kind == "wheel" and why in found.notes[0] and "secret" not in json.dumps(found.notes)
    wheel = found.wheels[dist.file]
    names = zipfile.ZipFile(wheel).namelist()
    assert zipfile.ZipFile(wheel).read(f"{MODULE}/__init__.py") == (b"SCORE = 2\n" if spoil == "dirty"
                                                                    else b"SCORE = 1\n")
    assert (f"{MODULE}/extra.py" in names) == (spoil == "dirty")
    assert sorted(p.name for p in project.iterdir()) == before  # built from a copy: no build/ left in the tree


def test_an_editable_folder_whose_build_gives_another_version_is_not_published(site, index, tmp_path, monkeypatch):
    project = plugin_project(tmp_path / "proj", version="1.1")  # bumped since the install
    monkeypatch.setattr(SourceFinder, "_build_wheel", lambda self, folder, name, version: (
        _wheel_of(self._fresh_dir(name), "1.1", {}), ""))
    editable(site, project)
    dist = find(tmp_path, index).record.distributions[0]
    assert dist.kind == "none" and "is not one of sb-fake-plug 1.0" in dist.reason


def test_an_editable_install_whose_folder_is_gone_is_not_published(site, index, tmp_path):
    editable(site, tmp_path / "gone")
    dist = find(tmp_path, index).record.distributions[0]
    assert dist.kind == "none" and dist.reason == "installed editable from a folder that is no longer there"


def test_a_vcs_install_is_its_url_and_commit(site, index, tmp_path):
    commit = "ab" * 20
    install(site, direct_url={"url": "git+https://example.org/sb/plug.git", "subdirectory": "pkg",
                              "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": "v1"}})
    (dist,) = find(tmp_path, index).record.distributions
    assert (dist.kind, dist.url, dist.commit, dist.subdirectory) == ("git", "https://example.org/sb/plug.git",
                                                                     commit, "pkg")


def test_a_vcs_install_with_credentials_in_its_url_is_rebuilt_not_published_with_them(site, index, tmp_path):
    install(site, direct_url={"url": "git+https://user:secret@example.org/sb/plug.git",
                              "vcs_info": {"vcs": "git", "commit_id": "ab" * 20}})
    found = find(tmp_path, index)
    assert found.record.distributions[0].kind == "wheel"
    assert "secret" not in json.dumps([d.__dict__ for d in found.record.distributions]) + " ".join(found.notes)
    assert "installed from git https://example.org/sb/plug.git, not a public git URL" in found.notes[0]


def test_index_credentials_are_never_shown_nor_recorded(site, index, tmp_path):
    install(site, extra_record=[("../../share/sb/data.txt", record_hash(b"x"), "1")])  # unpublishable: a reason
    work = tmp_path / "work"
    work.mkdir()
    secret = index.url.replace("http://", "http://user:secret@")
    found = SourceFinder(work, index_url=secret, timeout=2).sources_of(run_of())
    (dist,) = found.record.distributions
    assert dist.kind == "none" and index.url in dist.reason
    assert "secret" not in dist.reason and "secret" not in " ".join(found.notes)


def test_a_run_that_recorded_no_version_of_a_distribution_is_refused(site, index, tmp_path):
    install(site)
    with pytest.raises(SourceError, match="^the run recorded no version of sb-fake-plug: what it ran cannot be "):
        find(tmp_path, index, _Run(PluginRecord(name="fake", distribution=NAME, version=None)))


def _local_wheel(tmp_path: Path) -> tuple[Path, str]:
    folder = tmp_path / "wheels"
    folder.mkdir()
    path = folder / "sb_fake_plug-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{MODULE}/__init__.py", "SCORE = 1\n")
        archive.writestr("sb_fake_plug-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {NAME}\nVersion: 1.0\n")
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_local_wheel_installed_from_and_still_there_is_stored_as_it_was(site, index, tmp_path):
    wheel, digest = _local_wheel(tmp_path)
    install(site, direct_url={"url": wheel.as_uri(), "archive_info": {"hashes": {"sha256": digest}}})
    found = find(tmp_path, index)
    (dist,) = found.record.distributions
    assert dist.kind == "wheel" and dist.sha256 == digest and "the wheel it was installed from" in found.notes[0]
    assert found.wheels[dist.file].read_bytes() == wheel.read_bytes() and index.requests == []


def test_a_local_wheel_changed_since_the_install_is_not_taken_for_what_was_installed(site, index, tmp_path):
    wheel, digest = _local_wheel(tmp_path)
    install(site, direct_url={"url": wheel.as_uri(), "archive_info": {"hashes": {"sha256": digest}}})
    wheel.write_bytes(wheel.read_bytes() + b"\0")  # rebuilt since: another wheel of the same name
    found = find(tmp_path, index)
    _assert_rebuilt_wheel(found, f"installed from {wheel.as_uri()}")


def test_a_work_tree_whose_package_needs_ignored_files_is_not_taken_for_its_commit(site, index, tmp_path, monkeypatch):
    project, _ = git_repo(tmp_path)
    (project / ".gitignore").write_text("secret_data.json\n__pycache__/\n")
    git(project, "add", ".gitignore")
    git(project, "commit", "-q", "-m", "ignore")
    git(project, "update-ref", "refs/remotes/origin/main", git(project, "rev-parse", "HEAD"))
    (project / MODULE / "__pycache__").mkdir()  # build artefacts do not count
    (project / MODULE / "__pycache__" / "x.pyc").write_bytes(b"")
    editable(site, project)
    assert find(tmp_path, index).record.distributions[0].kind == "git"
    (project / MODULE / "secret_data.json").write_text("{}")  # read by the editable install, not in the commit
    monkeypatch.setattr(SourceFinder, "_build_wheel", lambda self, folder, name, version: (
        _wheel_of(self._fresh_dir(name), version, {}), ""))
    found = find(tmp_path, index)
    assert found.record.distributions[0].kind == "wheel"
    assert f"its folder holds files git ignores ({MODULE}/secret_data.json)" in found.notes[0]


def test_a_module_added_to_an_installed_package_is_not_the_release(site, index, tmp_path):
    install(site)
    index.files["sb-fake-plug"] = ["sb_fake_plug-1.0-py3-none-any.whl"]
    (site / MODULE / "__pycache__").mkdir()
    (site / MODULE / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")  # what Python writes is no change
    assert find(tmp_path, index).record.distributions[0].kind == "index"
    (site / MODULE / "patch.py").write_text("SCORE = 3\n")
    dist = find(tmp_path, index).record.distributions[0]
    assert dist.kind == "none"
    assert dist.reason == f"installed files differ from what was installed ({MODULE}/patch.py was added)"


def test_a_module_added_after_a_local_install_is_not_rebuilt_without_it(site, index, tmp_path):
    install(site, direct_url={"url": f"file://{tmp_path}/somewhere", "dir_info": {}})
    (site / MODULE / "patch.py").write_text("SCORE = 3\n")
    dist = find(tmp_path, index).record.distributions[0]
    assert dist.kind == "none" and dist.reason.endswith(f"installed files differ from what was installed "
                                                        f"({MODULE}/patch.py was added)")
