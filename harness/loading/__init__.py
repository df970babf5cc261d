"""Tasks and their data: declarations read from JSON (:mod:`.taskdef`), BEIR folders
(:mod:`.beir`) and ir_datasets (:mod:`.irds`); splits (:mod:`.splits`); frozen candidate
pools (:mod:`.pools`); the cached summary of a loaded task (:mod:`.loadcache`); notes on
the data said once (:mod:`.data_notes`).
"""
