"""statbench grid: whole experiments as cells of ordinary runs (see docs/grid.md)."""
