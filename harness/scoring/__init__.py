"""Scoring: measures (ir-measures names and custom measures, :mod:`.measures`), per-split
and per-query scores (:mod:`.evaluation`), each measure broken down by query attribute
(:mod:`.breakdowns`), a foreign run file scored (:mod:`.evaluate_file`),
paired significance tests (:mod:`.significance`), comparison with published figures
(:mod:`.reproduction`), and what makes a results record publishable on a board or in a
comparison (:mod:`.publishable`: consistent, finite, in-range figures that agree; efficiency
and cost figures that agree, :mod:`.efficiency_checks`).
"""
