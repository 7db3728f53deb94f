"""``ratings demo``: fit the bundled simulated example and print every scope and the headline."""

from __future__ import annotations

import argparse

from ratings.cli.kit import Command

__all__ = ["COMMAND", "NEXT_STEPS", "run_demo"]

#: What the demo suggests trying next, on one's own file.
NEXT_STEPS = """\
Next, on your own file (one row per verdict: model_a, model_b, winner = A, B or tie, and a
task_id to cluster the intervals; other names are mapped with --columns):
  ratings fit YOUR.csv                                   # ratings with intervals
  ratings fit YOUR.csv --columns 'model_1=model_a,model_2=model_b,result=winner'
  ratings fit YOUR.csv -o ratings.csv --pairs pairs.csv  # save the table and every pair
  ratings plot ratings.csv -o bands.png                  # the bands as an image
  ratings audit YOUR.csv                                 # the judges: position bias, agreement
  ratings next YOUR.csv --judges J1,J2 --n 50 --seed 1 -o next.csv   # what to judge next
  ratings COMMAND --help                                 # every option, with examples"""


def run_demo() -> int:
    """``ratings demo``: fit the bundled example (Crowd-BT judged scopes with reused judge
    qualities, rubric checks as synthetic matches) and print every scope and the headline."""
    import pandas as pd

    from ratings.datasets.example import EXAMPLE_ANCHOR, example_path, judge_quality_paths
    from ratings.io import read_verdicts
    from ratings.scopes.combine import combine, fit_scopes
    from ratings.scopes.rubric import read_rubric, rubric_to_matches

    verdicts = pd.read_csv(example_path(), dtype=str)
    matches = rubric_to_matches(read_rubric(example_path("rubric.csv")))
    log = read_verdicts(pd.concat([verdicts, matches], ignore_index=True))
    print("Bundled example (simulated, not real judgments): judged scopes fitted with Crowd-BT "
          "using judge qualities from past judgments, rubric checks as synthetic matches (BT), "
          f"headline = mean of the scope Elos. Files: {example_path().parent}")  # fmt: skip
    results = fit_scopes(log, anchor=EXAMPLE_ANCHOR, judge_quality=judge_quality_paths())
    for r in results.values():
        print()
        print(r.summary())
    head = combine(results)
    print()
    print(head.summary())
    print()
    print(NEXT_STEPS)
    return 0


def _arguments(p: argparse.ArgumentParser) -> None:
    """``demo`` takes no arguments."""


COMMAND = Command(
    name="demo",
    help="fit the bundled simulated example and print the tables",
    description="Fit the bundled simulated example and print every scope and the headline.",
    examples=("ratings demo",),
    add_arguments=_arguments,
    run=lambda args: run_demo(),
    order=100,
)  # fmt: skip
