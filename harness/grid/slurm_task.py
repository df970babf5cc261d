"""A cell as a submitit task: checkpointable, so a Slurm job pre-empted or timed out is
requeued with the same cell, which resumes from the statbench cache. Imported only by
the Slurm executor (it imports submitit)."""

from __future__ import annotations

import submitit

from statbench.grid.cellrun import CellJob, CellOutcome, run_cell


class CellTask(submitit.helpers.Checkpointable):
    def __call__(self, job: CellJob) -> CellOutcome:
        return run_cell(job)
