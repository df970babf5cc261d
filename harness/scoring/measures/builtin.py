"""The built-in custom measures, registered through the ``statbench`` entry point group
exactly as a third-party measure plugin is."""

from __future__ import annotations

from statbench.registry.hookspecs import hookimpl
from statbench.scoring.measures.fbeta import FBeta
from statbench.scoring.measures.fbeta_of_means import SetFBeta, SetPrecision, SetRecall


@hookimpl
def register_measures(register):
    register(FBeta)
    register(SetPrecision)
    register(SetRecall)
    register(SetFBeta)
