"""Issue 25, one place per concept: every cache key is built by statbench.storage.keys, every
digest is taken by statbench.data.checksum, and the code-version part of a key comes from
the modules the code imports, never from a list of file names."""

import ast
import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import statbench.data.checksum as checksum
import statbench.storage.keys as keys
from statbench.contract.records import Document
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
SCANNED = [ROOT / "harness", ROOT / "plugins" / "builtin", ROOT / "tasks"]
#: modules that may import hashlib, and why none of them builds a cache key with it
HASHLIB_ALLOWED = {
    "harness/data/checksum.py": "the one home of digests",
    "harness/data/download.py": "verifies a download while it streams",
    "harness/storage/model_recipes.py": "verifies a wheel member while it streams",
}
#: entries named by parts of their key on purpose, and why (the manifest holds the whole key)
READABLE_NAMES = {
    "plugins/builtin/lexical/analysis.py": "tokens/DATA-IDS-ANALYZER-LAYOUT: a folder a reader can tell apart",
}
#: functions whose result names something by a digest
DIGESTS = {"config_key", "json_sha256", "text_sha256", "records_digest", "ids_digest", "hexdigest", "sha256",
           "structure_digest", "corpus_checksum", "file_sha256", "files_sha256", "bytes_sha256"}


def _modules():
    for root in SCANNED:
        for path in sorted(root.rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text("utf-8"))


def _called(node) -> str | None:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def test_no_cache_entry_is_named_by_a_digest_made_outside_the_key_module():
    """``CacheEntry(root / config_key(key), ...)`` and ``root / digest[:16]`` are recipes of
    their own: an entry named by its key is :func:`statbench.storage.keys.keyed_entry`."""
    hand_made = []
    for rel, tree in _modules():
        if rel == "harness/storage/keys.py" or rel in READABLE_NAMES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) == "CacheEntry" and node.args:
                path = node.args[0]
                digest = any(isinstance(n, ast.Call) and _called(n) in DIGESTS for n in ast.walk(path))
                sliced = any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) for n in ast.walk(path))
                if digest or sliced:
                    hand_made.append(f"{rel}:{node.lineno}")
    assert hand_made == []


def test_digests_are_taken_by_the_checksum_module_only():
    """No second sha256 helper: a module hashing on its own is one of the few that do not
    build a key, each with its reason."""
    hashing = set()
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == "hashlib" for a in node.names):
                hashing.add(rel)
            elif isinstance(node, ast.ImportFrom) and node.module == "hashlib":
                hashing.add(rel)
    assert hashing - set(HASHLIB_ALLOWED) == set()
    assert "harness/data/checksum.py" in hashing


def test_the_old_helper_names_are_the_one_helper():
    import statbench.api as api
    from statbench.models.api_rerankers import cache as api_cache
    from statbench.models.shared import artefacts, hub
    from statbench.run import runcache
    from statbench.storage import cache, weights

    assert cache.sha256_file is checksum.file_sha256
    assert keys.config_key is checksum.config_key
    # no second name for a key: the run cache's entries only (callers import keys from storage.keys)
    assert not hasattr(runcache, "corpus_checksum") and not hasattr(runcache, "task_identity")
    # the built-ins take them from statbench.api; their own old names for them are gone
    assert (api.ids_digest, api.text_sha256, api.config_key, api.corpus_checksum) == (
        keys.ids_digest, checksum.text_sha256, checksum.config_key, keys.corpus_checksum)
    assert (api.fingerprint, api.resolve, api.local_copy_dir) == (weights.fingerprint, weights.resolve,
                                                                   weights.local_copy_dir)
    assert not hasattr(artefacts, "ids_digest") and not hasattr(api_cache, "text_sha256")
    assert not hasattr(hub, "fingerprint")


def _docs():
    return [Document(id="a1", text="Le contrat est formé.", title="Art. 1", fields={"heading_path": ["Livre I"]}),
            Document(id="a2", text="Nul ne peut \ud800 être.", title="", fields={})]


def test_there_is_one_corpus_checksum_and_its_recorded_value_is_unchanged():
    """``results.json`` records it (``task.corpus_checksum``): the value must be the one the
    runs already published; the dense encodings are keyed by the same checksum."""
    import hashlib

    from statbench.models.dense.encoding_cache import corpus_checksum as encoder_checksum

    digest = hashlib.sha256()  # the recipe the committed results were written with
    for doc in _docs():
        fields = json.dumps(dict(doc.fields), sort_keys=True, ensure_ascii=False, default=str) if doc.fields else ""
        digest.update(f"{doc.id}\0{doc.title}\0{doc.text}\0{fields}\0\1".encode("utf-8", "surrogatepass"))
    assert keys.corpus_checksum(_docs()) == digest.hexdigest()
    assert keys.corpus_checksum({d.id: d for d in _docs()}) == digest.hexdigest()
    assert encoder_checksum(_docs()) == digest.hexdigest()
    assert encoder_checksum(_docs(), with_title=True) != encoder_checksum(_docs())


def test_keyed_entries_are_named_by_the_canonical_key(tmp_path):
    entry = keys.keyed_entry(tmp_path, "kind", {"b": 1, "a": [1, 2]})
    assert entry.path == tmp_path / checksum.config_key({"a": [1, 2], "b": 1})
    assert entry.key == {"b": 1, "a": [1, 2]} and entry.kind == "kind"
    sharded = keys.keyed_entry(tmp_path, "api-response", {"provider": "p", "q": "x"}, sharded=True)
    whole = checksum.json_sha256({"provider": "p", "q": "x"})
    assert sharded.path == tmp_path / whole[:2] / whole  # the paid responses cached before stay found


# --- code version ---------------------------------------------------------------------------

@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package ``pkgk`` on sys.path: ``a`` imports ``b`` inside a function."""
    root = tmp_path / "site"
    (root / "pkgk").mkdir(parents=True)
    (root / "pkgk" / "__init__.py").write_text("")
    (root / "pkgk" / "a.py").write_text("def f():\n    from pkgk import b\n    return b.X\n")
    (root / "pkgk" / "b.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [m for m in sys.modules if m == "pkgk" or m.startswith("pkgk.")]:
        del sys.modules[name]


def _version_of(name: str) -> str:
    import importlib

    keys._code_version.cache_clear()
    for loaded in [m for m in sys.modules if m == "pkgk" or m.startswith("pkgk.")]:
        del sys.modules[loaded]
    importlib.invalidate_caches()
    return keys.code_version(importlib.import_module(name))


def test_the_code_version_follows_imports_not_file_names(package):
    first = _version_of("pkgk.a")
    assert set(keys.code_files(sys.modules["pkgk.a"])) == {"pkgk.a", "pkgk"} | {"pkgk.b"}
    (package / "pkgk" / "b.py").write_text("X = 2\n")  # an edit of a module only imported in a function
    edited = _version_of("pkgk.a")
    assert edited != first
    # moved into a subpackage: still covered, because it is still imported
    (package / "pkgk" / "sub").mkdir()
    (package / "pkgk" / "sub" / "__init__.py").write_text("")
    (package / "pkgk" / "b.py").rename(package / "pkgk" / "sub" / "b.py")
    (package / "pkgk" / "a.py").write_text("def f():\n    from pkgk.sub import b\n    return b.X\n")
    _version_of("pkgk.a")
    assert "pkgk.sub.b" in keys.code_files(sys.modules["pkgk.a"])
    (package / "pkgk" / "sub" / "b.py").write_text("X = 3\n")
    assert _version_of("pkgk.a") != edited


def _summary_key(stard_dir):
    from statbench.loading.loadcache import summary_entry
    from statbench.registry.plugins import get_registry

    entry = get_registry().get("tasks", "stard")
    keys._code_version.cache_clear()
    return summary_entry(entry.cls(), entry, stard_dir, logging.getLogger("test")).key


def test_editing_any_loading_module_changes_the_summary_key(stard_dir, monkeypatch):
    """Each module the loading code imports (found by following imports) is part of the
    summary's key: an edit of any of them gives a new key, so an old summary is never read."""
    import statbench.loading.loadcache as loadcache
    import statbench.loading.taskdef as taskdef
    import statbench.tasks.stard as stard

    before = _summary_key(stard_dir)
    files = keys.code_files(loadcache, taskdef, stard)
    for name in ("statbench.data.dataio", "statbench.data.validation", "statbench.loading.splits",
                 "statbench.loading.taskdef", "statbench.loading.loadcache", "statbench.data.checksum",
                 "statbench.contract.records", "statbench.contract.taskinfo", "statbench.storage.keys",
                 "statbench.tasks.stard", "statbench"):
        assert name in files, name
    real = keys.file_sha256
    for name, path in sorted(files.items()):
        monkeypatch.setattr(keys, "file_sha256", lambda p, edited=path: "edited" if Path(p) == edited else real(p))
        assert _summary_key(stard_dir)["code"] != before["code"], name
    monkeypatch.setattr(keys, "file_sha256", real)
    assert _summary_key(stard_dir) == before


def test_the_loading_code_holds_every_module_a_load_imports(stard_dir):
    """Not a partial set: every statbench module a fresh process has imported once STARD is
    loaded is in the code version of its summary."""
    script = textwrap.dedent("""
        import logging, sys
        from pathlib import Path
        import statbench.loading.loadcache as loadcache, statbench.loading.taskdef as taskdef
        from statbench.tasks.stard import Stard
        Stard().load(Path(sys.argv[1]), logging.getLogger("x"))
        from statbench.storage import keys
        covered = {Path(p).resolve() for p in keys.code_files(loadcache, taskdef, sys.modules[Stard.__module__]).values()}
        loaded = {Path(m.__file__).resolve() for n, m in list(sys.modules.items())
                  if n.split(".")[0] == "statbench" and getattr(m, "__file__", None)}
        print("\\n".join(sorted(str(p) for p in loaded - covered)))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(stard_dir)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


# --- weights --------------------------------------------------------------------------------

def test_the_run_keys_import_no_model():
    """Weights identity is the core's (statbench.storage.weights), not a model's import."""
    for rel in ("harness/storage/keys.py", "harness/storage/weights.py", "harness/run/runcache.py",
                "harness/loading/loadcache.py"):
        tree = ast.parse((ROOT / rel).read_text("utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not [m for m in imported if m.startswith("statbench.models")], rel


def test_a_local_weights_folder_is_fingerprinted_into_the_model_identity(tmp_path):
    import os

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "weights.bin").write_bytes(b"\0" * 8)
    first = keys.weights_identity({"model": str(folder), "query_model": "", "batch_size": 8})
    assert list(first) == ["model"] and first["model"].startswith("dir:")
    (folder / "weights.bin").write_bytes(b"\1" * 9)
    os.utime(folder / "weights.bin", ns=(1, 1))
    assert keys.weights_identity({"model": str(folder)})["model"] != first["model"]
    assert keys.weights_identity({"model": "org/not-local-anywhere"}) == {}
