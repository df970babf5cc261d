"""What several model families share: weights from the hub (:mod:`.hub`), model specs
(:mod:`.specs`), cached artefacts (:mod:`.artefacts`) and top-k selection (:mod:`.topk`).
"""
