"""The static leaderboard site: ``statbench leaderboard build`` turns a folder of results
JSON files into HTML pages that open from disk (no server, no network).

Modules: :mod:`.collect` reads and validates results into rows, :mod:`.plots` draws the
inline SVG charts, :mod:`.site` renders and writes the pages, :mod:`.cli` is the command.
"""
