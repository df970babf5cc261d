"""A submission's code source, source.json (statbench.leaderboard.repo.source): written and read
back strictly, every damaged or dishonest file refused in one line naming the file, a stored
wheel checked by its hash, file name and metadata, and the pip arguments and reproduce
line that follow the source."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from statbench.errors import DataFormatError
from statbench.leaderboard.repo.source import (
    NOT_PUBLISHED,
    SOURCE_FILE,
    DistSource,
    SourceNotPublished,
    SourceRecord,
    install_line,
    normal_version,
    pip_requirements,
    published,
    read_source,
    source_problems,
    source_text,
)
from statbench.results.record import PluginRecord

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_wheel(folder: Path, name: str = "sb-fake-plug", version: str = "1.0", file: str | None = None,
               meta_name: str | None = None, meta_version: str | None = None) -> Path:
    """A minimal wheel whose METADATA names ``meta_name``/``meta_version`` (default: its own)."""
    file = file or f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    info = f"{(meta_name or name).replace('-', '_')}-{meta_version or version}.dist-info"
    path = folder / file
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("sb_fake_plug/__init__.py", "X = 1\n")
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {meta_name or name}\n"
                                             f"Version: {meta_version or version}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def full_record(folder: Path) -> SourceRecord:
    wheel = make_wheel(folder, "sb-wheel-plug", "0.3")
    return SourceRecord("0.1.0", (
        DistSource("sb-index-plug", "1.2.0", "index"),
        DistSource("sb-wheel-plug", "0.3", "wheel", file=wheel.name, sha256=sha(wheel)),
        DistSource("sb-git-plug", "2.0", "git", url="https://example.org/sb/plug.git", commit=COMMIT,
                   subdirectory="plugins/one"),
    ))


def write(folder: Path, obj) -> Path:
    path = folder / SOURCE_FILE
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return path


# --- round trip and what follows from it ------------------------------------------------------------

def test_a_record_is_written_and_read_back_as_it_was(tmp_path):
    record = full_record(tmp_path)
    (tmp_path / SOURCE_FILE).write_text(source_text(record), encoding="utf-8")
    assert read_source(tmp_path) == record
    obj = json.loads((tmp_path / SOURCE_FILE).read_text("utf-8"))
    assert obj["format"] == 1 and obj["statbench"] == "0.1.0"
    assert obj["distributions"][0] == {"name": "sb-index-plug", "version": "1.2.0", "kind": "index"}
    assert obj["distributions"][2]["subdirectory"] == "plugins/one" and set(obj["distributions"][2]) == {
        "name", "version", "kind", "url", "commit", "subdirectory"}
    assert source_text(record) == source_text(read_source(tmp_path))  # the same record, the same bytes


def test_pip_arguments_and_the_reproduce_line_follow_the_source(tmp_path):
    record = full_record(tmp_path)
    assert published(record)
    assert pip_requirements(record, tmp_path) == [
        "sb-index-plug==1.2.0", str(tmp_path.absolute() / "sb_wheel_plug-0.3-py3-none-any.whl"),
        f"git+https://example.org/sb/plug.git@{COMMIT}#subdirectory=plugins/one"]
    assert install_line(record) == (f"pip install sb-index-plug==1.2.0 ./sb_wheel_plug-0.3-py3-none-any.whl "
                                    f"'git+https://example.org/sb/plug.git@{COMMIT}#subdirectory=plugins/one' "
                                    "(stored beside the run)")
    only_index = SourceRecord("0.1.0", (DistSource("sb-index-plug", "1.2.0", "index"),))
    assert install_line(only_index) == "pip install sb-index-plug==1.2.0"
    assert install_line(SourceRecord("0.1.0", ())) == "" and pip_requirements(SourceRecord("0.1.0"), tmp_path) == []


def test_a_distribution_without_a_source_is_not_published(tmp_path):
    record = SourceRecord("0.1.0", (DistSource("sb-index-plug", "1.2.0", "index"),
                                    DistSource("sb-local", "0.1", "none", reason="installed from a folder that is "
                                                                                 "gone")))
    assert not published(record) and install_line(record) is None
    with pytest.raises(SourceNotPublished, match=f"^{NOT_PUBLISHED}: sb-local 0.1: installed from a folder"):
        pip_requirements(record, tmp_path)
    (tmp_path / SOURCE_FILE).write_text(source_text(record), encoding="utf-8")
    assert read_source(tmp_path) == record


# --- refusals ----------------------------------------------------------------------------------------------

GOOD_INDEX = {"name": "sb-index-plug", "version": "1.2.0", "kind": "index"}
GOOD_GIT = {"name": "sb-git-plug", "version": "2.0", "kind": "git", "url": "https://example.org/sb/plug.git",
            "commit": COMMIT, "subdirectory": None}


def _with(entry: dict, **change) -> dict:
    return {"format": 1, "statbench": "0.1.0", "distributions": [{**entry, **change}]}


@pytest.mark.parametrize(("obj", "message"), [
    ([], "exactly format, statbench, distributions; found a JSON list"),
    ({"format": 1, "statbench": "0.1.0", "distributions": [], "bad\nkey": 1}, "found 'bad\\nkey', distributions"),
    ({"format": 1, "statbench": "0.1.0"}, "exactly format, statbench, distributions"),
    ({"format": 1, "statbench": "0.1.0", "distributions": [], "extra": 1}, "exactly format"),
    ({"format": 2, "statbench": "0.1.0", "distributions": []}, "reads source format 1"),
    ({"format": True, "statbench": "0.1.0", "distributions": []}, "reads source format 1"),
    ({"format": 1, "statbench": "", "distributions": []}, "field 'statbench'"),
    ({"format": 1, "statbench": "0.1.0", "distributions": {}}, "not a list"),
    (_with(GOOD_INDEX, kind="pypi"), "kind 'pypi': one of index, wheel, git, none"),
    (_with(GOOD_INDEX, url="https://x"),
     "an entry of kind 'index' holds exactly kind, name, version; found kind, name, url, version"),
    (_with(GOOD_INDEX, name="bad name!"), "not a distribution name"),
    (_with(GOOD_INDEX, name="Statbench"), "statbench itself is not a plugin distribution"),
    (_with(GOOD_INDEX, version="latest"), "not a PEP 440 version"),
    (_with(GOOD_INDEX, version="1.0\n"), "not a PEP 440 version"),
    (_with(GOOD_GIT, url="https://user:token@github.com/sb/plug.git"), "holds a password or token"),
    (_with(GOOD_GIT, url="git@github.com:sb/plug.git"), "scheme '(none)'"),
    (_with(GOOD_GIT, url="https://example.org/sb/plug.git#egg=x"), "a fragment"),
    (_with(GOOD_GIT, url="https://example.org/sb/p@v1"), "an '@' in its path"),
    (_with(GOOD_GIT, url="https:///nohost"), "no host"),
    (_with(GOOD_GIT, commit="0123abc"), "not a full commit id"),
    (_with(GOOD_GIT, commit=COMMIT.upper()), "not a full commit id"),
    (_with(GOOD_GIT, subdirectory="../outside"), "not a relative folder path inside the repository"),
    (_with(GOOD_GIT, subdirectory="/abs"), "not a relative folder path"),
    (_with({"name": "sb-x", "version": "1", "kind": "none", "reason": " "}), "not a reason"),
    (_with({"name": "sb-x", "version": "1", "kind": "none"}), "holds exactly kind, name, reason, version"),
])
def test_a_damaged_or_dishonest_source_file_is_one_line_naming_it(tmp_path, obj, message):
    path = write(tmp_path, obj)
    with pytest.raises(DataFormatError) as info:
        read_source(tmp_path)
    text = str(info.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


@pytest.mark.parametrize(("text", "message"), [
    ('{"format": 1, "format": 1, "statbench": "0.1.0", "distributions": []}', "not valid JSON"),
    ('{"format": NaN, "statbench": "0.1.0", "distributions": []}', "not valid JSON"),
    ('{"format": 1,', "not valid JSON"),
])
def test_source_json_is_parsed_strictly(tmp_path, text, message):
    write(tmp_path, text)
    with pytest.raises(DataFormatError, match=message):
        read_source(tmp_path)


def test_a_distribution_listed_twice_by_another_spelling_is_refused(tmp_path):
    obj = {"format": 1, "statbench": "0.1.0", "distributions": [GOOD_INDEX, {**GOOD_INDEX, "name": "SB_Index.Plug"}]}
    write(tmp_path, obj)
    with pytest.raises(DataFormatError, match=r"'SB_Index.Plug' is listed twice \(also distributions\[0\]\)"):
        read_source(tmp_path)


def test_missing_or_linked_source_file_is_refused(tmp_path):
    with pytest.raises(DataFormatError, match="missing or not a regular file"):
        read_source(tmp_path)
    other = tmp_path / "elsewhere.json"
    other.write_text(json.dumps({"format": 1, "statbench": "0.1.0", "distributions": []}))
    (tmp_path / SOURCE_FILE).symlink_to(other)
    with pytest.raises(DataFormatError, match="missing or not a regular file"):
        read_source(tmp_path)


def _wheel_entry(wheel: Path, **change) -> dict:
    return {"name": "sb-fake-plug", "version": "1.0", "kind": "wheel", "file": wheel.name, "sha256": sha(wheel),
            **change}


def test_the_stored_wheel_must_be_there_whole_and_be_what_it_says(tmp_path):
    wheel = make_wheel(tmp_path)
    write(tmp_path, _with(_wheel_entry(wheel)))
    assert read_source(tmp_path).distributions[0].file == wheel.name
    # another byte: its hash
    original = wheel.read_bytes()
    wheel.write_bytes(original + b"\0")
    with pytest.raises(DataFormatError, match=rf"^{wheel}: hashes to .*, not to the .* source.json records"):
        read_source(tmp_path)
    # gone, or a link to the real one
    wheel.unlink()
    with pytest.raises(DataFormatError, match="names the wheel 'sb_fake_plug-1.0-py3-none-any.whl', which is not a "
                                              "regular file beside it"):
        read_source(tmp_path)
    real = tmp_path / "real"
    real.mkdir()
    (real / wheel.name).write_bytes(original)
    wheel.symlink_to(real / wheel.name)
    with pytest.raises(DataFormatError, match="not a regular file beside it"):
        read_source(tmp_path)


@pytest.mark.parametrize(("file", "message"), [
    ("sb_other-1.0-py3-none-any.whl", "a wheel of 'sb_other', not of 'sb-fake-plug'"),
    ("sb_fake_plug-1.1-py3-none-any.whl", "a wheel of version '1.1', not '1.0'"),
    ("sb_fake_plug-1.0.tar.gz", "not a wheel file name"),
    ("sb_fake_plug-1.0-py3-any.whl", "not a wheel file name"),
    ("../sb_fake_plug-1.0-py3-none-any.whl", "not a plain file name"),
    (".sb_fake_plug-1.0-py3-none-any.whl", "not a plain file name"),
    ("sb_fake_plug-1.0-py3-none-$(id).whl", "not a wheel file name"),
])
def test_a_wheel_named_for_another_distribution_or_version_is_refused(tmp_path, file, message):
    write(tmp_path, _with({"name": "sb-fake-plug", "version": "1.0", "kind": "wheel", "file": file,
                           "sha256": "0" * 64}))
    with pytest.raises(DataFormatError, match=message):
        read_source(tmp_path)


def test_a_wheel_whose_metadata_names_another_version_is_refused(tmp_path):
    wheel = make_wheel(tmp_path, meta_version="1.1")  # renamed by hand: the file name says 1.0
    write(tmp_path, _with(_wheel_entry(wheel)))
    with pytest.raises(DataFormatError, match=r"its metadata names sb-fake-plug 1.1, not sb-fake-plug 1.0"):
        read_source(tmp_path)
    not_a_zip = tmp_path / "sb_fake_plug-1.0-py3-none-any.whl"
    not_a_zip.write_bytes(b"not a zip")
    write(tmp_path, _with(_wheel_entry(not_a_zip)))
    with pytest.raises(DataFormatError, match="not a readable wheel"):
        read_source(tmp_path)


def test_two_entries_naming_one_wheel_are_refused(tmp_path):
    wheel = make_wheel(tmp_path)
    twin = {**_wheel_entry(wheel), "name": "sb-fake-plug"}
    write(tmp_path, {"format": 1, "statbench": "0.1.0", "distributions": [twin, {**twin, "name": "sb-fake.plug"}]})
    with pytest.raises(DataFormatError, match="listed twice"):
        read_source(tmp_path)


@pytest.mark.parametrize(("given", "normal"), [
    ("1.0", "1.0"), ("01.02", "1.2"), ("v1.0a1", "1.0a1"), ("1.0-1", "1.0.post1"), ("1.0.post", "1.0.post0"),
    ("1.0RC", "1.0rc0"), ("1!2.0dev3", "1!2.0.dev3"), ("1.0+Local-x", "1.0+local.x"), ("latest", None),
    ("1.0\n", None), ("", None)])
def test_versions_are_compared_in_their_pep_440_normal_form(given, normal):
    assert normal_version(given) == normal


# --- agreement with the run ----------------------------------------------------------------------------

class _Part:
    def __init__(self, plugin):
        self.plugin = plugin


class _Run:
    """What source_problems reads of a Results."""

    def __init__(self, *plugins, statbench="0.1.0"):
        self.statbench_version = statbench
        self.task = _Part(PluginRecord(name="stard", distribution="statbench", version="0.1.0"))
        self.model = _Part(plugins[0])
        self.reranker = _Part(plugins[1]) if len(plugins) > 1 else None


def test_the_source_must_list_exactly_the_runs_third_party_distributions():
    run = _Run(PluginRecord(name="fake", distribution="SB_Fake.Plug", version="1.0"),
               PluginRecord(name="rr", distribution="sb-rerank", version="2.0"))
    good = SourceRecord("0.1.0", (DistSource("sb-fake-plug", "1.0", "index"), DistSource("sb-rerank", "2.0", "index")))
    assert source_problems(good, run) == []
    assert source_problems(SourceRecord("0.1.0", good.distributions[:1]), run) == [
        "no entry for sb-rerank 2.0, which the run used"]
    other_version = SourceRecord("0.1.0", (DistSource("sb-fake-plug", "1.1", "index"), good.distributions[1]))
    assert source_problems(other_version, run) == ["sb-fake-plug 1.1, but the run recorded version 1.0"]
    extra = SourceRecord("0.1.0", (*good.distributions, DistSource("sb-more", "1", "index")))
    assert source_problems(extra, run) == ["sb-more: the run used no plugin of this distribution"]
    assert source_problems(SourceRecord("0.2.0", good.distributions), run) == [
        "statbench '0.2.0', but the run recorded '0.1.0'"]


def test_a_plugin_registered_in_process_can_only_be_unpublished():
    run = _Run(PluginRecord(name="my.plugin:thing", distribution=None, version=None))
    listed = SourceRecord("0.1.0", (DistSource("my.plugin-thing", "", "none", reason="registered in-process"),))
    assert source_problems(listed, run) == []
    claimed = SourceRecord("0.1.0", (DistSource("my.plugin-thing", "1.0", "index"),))
    assert source_problems(claimed, run) == ["my.plugin-thing: registered in-process by the run, so it has no source "
                                             "to publish"]
