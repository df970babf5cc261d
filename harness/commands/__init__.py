"""The command line: the core commands (:mod:`.cli`: run, evaluate, list, plugins, task)
and the commands that register as plugins (:mod:`.compare`, :mod:`.pool`, :mod:`.models`),
with what they share (:mod:`.tables`, :mod:`.repeated_options`, :mod:`.scaffold`).
"""
