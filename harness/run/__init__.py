"""A run: what ``statbench run`` asks for (:mod:`.request`), the stages from a request to
its output set (:mod:`.runner`), its efficiency and cost as measured (:mod:`.efficiency`), cached split runs
(:mod:`.splitruns`), later splits ranked by a forked copy of the run (:mod:`.splitfork`), how many worker
processes a command may use and whether it may fork them (:mod:`.processes`), the
keys and folders of the run cache (:mod:`.runcache`), and the output folder replaced as a unit
(:mod:`.outputs`); a frozen pool built by a run (:mod:`.pool_build`).
"""
