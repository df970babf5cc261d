"""Files in and out: the strict readers every loader uses (:mod:`.dataio`), TREC run and
qrels files (:mod:`.runfile`), judgement checks (:mod:`.validation`), checksums, downloads
with checksums (:mod:`.download`) and the recipes of model weights (:mod:`.model_recipes`).
"""
