"""A results repository: submissions made, read strictly and checked.

- :mod:`.submission`: the repository's layout and one submission read strictly.
- :mod:`.submit`: the ``statbench submit`` command; :mod:`.submit_runs`: its work, finished runs
  checked and written into a repository.
- :mod:`.source` and :mod:`.source_finder`: where a run's third-party code can be installed from.
- :mod:`.repository`: ``leaderboard check`` (a pull request's CI) and ``leaderboard init-repo``.
"""
