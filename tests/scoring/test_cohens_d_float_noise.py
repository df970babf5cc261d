"""Cohen's d of differences that are all equal up to float noise is undefined (printed "—"),
never a figure of 1e15 from a standard deviation of 1e-17."""

from __future__ import annotations

import pytest

from statbench.scoring.significance import cohens_d


def test_equal_differences_written_with_float_noise_have_no_d():
    diffs = [0.35 - 0.3, 0.45 - 0.4, 0.15 - 0.1, 0.95 - 0.9]
    assert len(set(diffs)) > 1  # the noise is there
    assert cohens_d(diffs) is None


def test_real_spread_still_gives_d():
    assert cohens_d([0.1, 0.2, 0.3]) == pytest.approx(0.2 / 0.1)
