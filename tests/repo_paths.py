"""Where the repository is, for tests that read its files (docs, pyproject, the source tree):
one place, so that a test file's depth under tests/ never decides what it reads."""

from pathlib import Path

#: The repository's root folder (the one holding pyproject.toml).
REPO_ROOT = Path(__file__).resolve().parents[1]
