"""Fusion of runs (issue 23): several runs of one task combined into one by ranx's fusion
functions (:mod:`.engine`), from run files or statbench output folders (``statbench fuse``:
:mod:`.inputs`, :mod:`.fuse`, :mod:`.cli`) or from configured models run split by split
(the ``fusion`` retriever: :mod:`.retriever`), registered by :mod:`.plugin`."""
