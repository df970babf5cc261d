"""statbench grid: whole experiments as cells of ordinary runs (see docs/grid.md).

The experiment file read strictly (:mod:`.spec`), expanded into cells that each hold one
typed run request (:mod:`.cells`), run by an executor (:mod:`.executors`: local workers,
Ray, Slurm; each cell one child process, :mod:`.cellrun`) with done cells skipped by
content (:mod:`.done`), tuning searches resolved (:mod:`.tuning`), and the experiment's
summary, live board and check against expected figures (:mod:`.experiment`, :mod:`.board`,
:mod:`.check`). The ``grid`` command (:mod:`.cli`) is registered as a plugin command.
"""
