"""Owns the likelihoods and their fits (BT, Firth, Newton, existence, separation, judge effects,
and Crowd-BT in ``models.crowd``); imports core, kernels, data and inference."""

__all__: list[str] = []
