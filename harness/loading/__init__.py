"""Tasks and their data: the one way to load a task, with every guard (:mod:`.load`: every
command, the ir_datasets adapter and the test kit use it); declarations read from JSON
(:mod:`.taskdef`), BEIR folders (:mod:`.beir`) and ir_datasets (:mod:`.irds`); splits
(:mod:`.splits`); frozen candidate pools, read and verified (:mod:`.pools`); the cached
summary of a loaded task (:mod:`.loadcache`); notes on the data said once (:mod:`.data_notes`).
"""
