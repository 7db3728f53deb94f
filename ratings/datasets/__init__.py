"""Owns the data ``ratings`` ships and makes: the bundled simulated example
(:mod:`~ratings.datasets.example`, files in ``examples/``) and verdicts drawn from known strengths
(:mod:`~ratings.datasets.simulate`); imports core, io, result, api and scopes."""

from ratings.core.lazy import lazy_exports

__all__ = ["EXAMPLE_ANCHOR", "TRUE_ELO", "example_path", "judge_quality_paths", "random_matches",
           "simulate_rubric", "simulate_verdicts", "submission_effects"]  # fmt: skip
__getattr__ = lazy_exports(__name__, {
    "EXAMPLE_ANCHOR": "ratings.datasets.example", "TRUE_ELO": "ratings.datasets.example",
    "example_path": "ratings.datasets.example",
    "judge_quality_paths": "ratings.datasets.example",
    "random_matches": "ratings.datasets.simulate", "simulate_rubric": "ratings.datasets.simulate",
    "simulate_verdicts": "ratings.datasets.simulate",
    "submission_effects": "ratings.datasets.simulate"})
