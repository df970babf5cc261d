"""Fusion of runs: several runs of one task combined into one by ranx's fusion functions
(:mod:`.engine`), each input identified by its content (:mod:`.sources`). From run files or
statbench output folders (``statbench fuse``: :mod:`.inputs`, :mod:`.fuse`, the command in
:mod:`.cli`) or from configured models run split by split (the ``fusion`` retriever:
:mod:`.retriever`, its ``runs=`` read by :mod:`.components`); both registered by :mod:`.plugin`.
"""
