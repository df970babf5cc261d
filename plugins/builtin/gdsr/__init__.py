"""G-DSR (Louis et al.): the retriever (:mod:`.gdsr`), its DSR encoder (:mod:`.dsr_encoder`),
the legislative graph (:mod:`.legal_graph`) and the graph encoder (:mod:`.lge`).
"""
