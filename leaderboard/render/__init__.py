"""The site: ``statbench leaderboard build`` writes an index and a board per task.

- :mod:`.build`: the build: rows collected, boards rendered (or kept: .incremental), the site
  swapped in; :mod:`.report` is what it says it did; :mod:`.admitted` decides which rows enter.
- :mod:`.board_files`: one board's files; :mod:`.task_page`: a board's page model and its
  significance tests; :mod:`.board_info`: what the board is about (task, measures, published figures).
- :mod:`.index_page`: the site's first page; :mod:`.overview_data`, :mod:`.overview_page`,
  :mod:`.overview_cache` and :mod:`.overview_rows`: the overview of a declared benchmark's boards
  (its rows, its page, what a rebuild keeps of it: its data and ranks, its rows' cells markup).
- :mod:`.rows`: each row's view; :mod:`.provenance`: where a row came from and how to reproduce it;
  :mod:`.run_links`: run files linked into the site; :mod:`.cardview`: a submission's model card.
- :mod:`.plots`, :mod:`.pareto`, :mod:`.breakdowns`, :mod:`.efficiency`: charts and cost columns;
  :mod:`.explorer`: the per-query explorer; :mod:`.templating`: the Jinja environment and filters.
"""
