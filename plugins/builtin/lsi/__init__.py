"""The LSI classifier (:mod:`.lsi`): articles as classes, ranked by class probability.
"""
