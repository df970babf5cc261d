"""What the site checked of a row, not only read from its submitter.

- :mod:`.verify`: ``--verify``: each row's run file re-scored against the task's judgements.
- :mod:`.claims`: a submission's declared command and facts against its record.
- :mod:`.levels`: a row's level (declared, verified, reproduced) and what each one checked.
"""
