"""Files in and out: the strict readers every loader uses (:mod:`.dataio`), TREC run and
qrels files (:mod:`.runfile`), judgement checks (:mod:`.validation`), every digest
(:mod:`.checksum`), downloads with checksums (:mod:`.download`) and atomic writes
(:mod:`.atomic`: a file is replaced whole or not at all).
"""
