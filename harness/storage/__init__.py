"""The cache: its folder (:mod:`.paths`), self-checking cache entries (:mod:`.cache`), every
cache key (:mod:`.keys`), the recipes of model weights (:mod:`.model_recipes`: hub ids,
files, checksums) and where weights are found locally, with their identity (:mod:`.weights`).
"""
