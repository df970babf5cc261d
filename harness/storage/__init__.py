"""Where statbench writes: atomic writes (:mod:`.atomic`), the cache folder (:mod:`.paths`)
and self-checking cache entries (:mod:`.cache`).
"""
