"""The static leaderboard site: ``statbench leaderboard build`` turns a folder of results
JSON files into HTML pages that open from disk (no server, no network).

Subpackages, in the order a build uses them: :mod:`.collect` reads and validates results into
board rows, :mod:`.verify` re-scores and checks them, :mod:`.ranking` tests and ranks a board,
:mod:`.render` writes the site, :mod:`.caches` keeps what a rebuild need not redo. Beside it:
:mod:`.repo` (results repositories and submissions), :mod:`.reproduce` (submissions re-run),
:mod:`.export` (a board as a paper's table or MTEB's format). :mod:`.cli` is the command group,
:mod:`.forkmap` shares a build's work with a forked process, :mod:`.sample` writes synthetic
results for previews and tests.
"""
