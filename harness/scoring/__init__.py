"""Scoring: measures (ir-measures names and custom measures, :mod:`.measures`), per-split
and per-query scores (:mod:`.evaluation`), paired significance tests
(:mod:`.significance`) and comparison with published figures (:mod:`.reproduction`).
"""
