"""``statbench leaderboard reproduce``: each submission re-run from its declared source.

- :mod:`.submissions`: the command: for each submission, the first step that applies.
- :mod:`.env`: a fresh isolated environment with the submission's source installed.
- :mod:`.run`: the recorded command re-run in it, bounded; :mod:`.probe` runs inside it.
- :mod:`.compare`: the re-run's figures against the submitted ones.
- :mod:`.verdicts`: the verdicts kept in the results repository, read by the site.
"""
