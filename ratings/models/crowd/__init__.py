"""Owns Crowd-BT: its likelihood and fit, prior, one-judge intervals, judge tables and the
policy that chooses its estimate and intervals; imports core, kernels, data and inference."""

__all__: list[str] = []
