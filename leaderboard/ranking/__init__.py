"""Ranks and significance on a board: what says which rows are better, and how sure that is.

- :mod:`.bootstrap_ranks`: each row's rank with a 95% interval, from a paired bootstrap over
  queries ("2 (1–4)"); ranks by the min rule (1-2-2-4).
- :mod:`.tie_group`: the rows the board's test cannot separate from the best (one top group).
- :mod:`.aggregate`: ranks across tasks for the overview (Borda count, mean rank), with
  intervals from resampling each task's queries.
- :mod:`.holm_family`: ▲/▼ on every measure of a board, Holm over every test on it.
- :mod:`.significance`: the board's paired tests against the baseline, all rows at once.
"""
