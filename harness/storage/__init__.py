"""The cache: its folder (:mod:`.paths`), self-checking cache entries (:mod:`.cache`), every
cache key (:mod:`.keys`, with the installed ir-measures' version, :mod:`.ir_measures_version`)
with files identified by their content (:mod:`.filedigests`), the files a cache keeps for
itself, checked on every read (:mod:`.cache_files`), one writer at a time for a folder
(:mod:`.folder_locks`), the recipes of model weights (:mod:`.model_recipes`: hub ids, files,
checksums) and where weights are found locally, with their identity (:mod:`.weights`);
reaching the Hugging Face hub (:mod:`.hub`: out of reach, the libraries' offline mode; one
bound on a whole fetch).
"""
