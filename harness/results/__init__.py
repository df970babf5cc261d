"""The record of a run: ``results.json``, typed (:mod:`.record`).
"""
