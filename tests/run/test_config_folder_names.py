"""A configuration's folder name (run/outputs.config_folder_name) is always one folder of its
own: never empty, ``.`` or ``..``, whatever a results file names its task or model."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("name", ["", ".", ".."])
def test_a_configuration_folder_never_names_another_folder(name):
    from statbench.run.outputs import config_folder_name

    folder = config_folder_name(name)
    assert folder not in ("", ".", "..") and "/" not in folder and folder.startswith(f"{name}~")
