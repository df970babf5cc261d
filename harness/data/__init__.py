"""Files in and out: the strict readers every loader uses (:mod:`.dataio`), TREC run and
qrels files (:mod:`.runfile`; a gzipped one read with a bound, :mod:`.gunzip`), judgement
checks (:mod:`.validation`), every digest (:mod:`.checksum`), downloads with checksums
(:mod:`.download`, with one overall bound on a network wait: :mod:`.deadline`) and atomic
writes (:mod:`.atomic`: a file is replaced whole or not at all, JSON encoded as
:mod:`.jsontext` writes it); and the text analysis of
the lexical models (:mod:`.analysis`, public as ``statbench.api.Analyzer``).
"""
