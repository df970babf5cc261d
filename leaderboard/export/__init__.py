"""A board out of the site: ``statbench leaderboard export``.

- :mod:`.paper`: a table for a paper (LaTeX, Markdown, CSV).
- :mod:`.mteb`: each row in MTEB's results format.
"""
