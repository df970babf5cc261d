"""The built-in tasks and benchmark: one JSON definition per task (what it is: files,
protocols, measures, published figures) and one loader module per task, each registered
through its entry point: STARD (:mod:`.stard`), BSARD (:mod:`.bsard`) and LLeQA
(:mod:`.lleqa`, both over Belgian codes: :mod:`.belgian`), COLIEE Task 3 (:mod:`.coliee`) and
the UK statutes (:mod:`.ukstat`); :mod:`.benchmarks` declares the benchmark ``statutes-v1``
over them. MTEB's retrieval tasks are tasks too (:mod:`.mteb`: ``--task mteb:NAME``, loaded by
the ``mteb`` extra, no JSON definition)."""
