"""The peers' published numbers reproduced by ours: the table of benchmarks_perf/README.md.

On the arena-hard battles of tests/data (1,348 verdicts, 4 models): arena-rank's Bradley-Terry
estimate and sandwich, FastChat's ``compute_bt`` and arena-hard-auto's ``compute_mle_elo``
(ported in tests/peer_reference.py), each as published and, where its optimizer stops short,
converged; our clustered CR2 intervals against the per-verdict sandwich. With
``--alpaca-eval DIR`` (a checkout, or a git directory, of tatsu-lab/alpaca_eval), AlpacaEval
2.0's published leaderboard (``weighted_alpaca_eval_gpt4_turbo``): every model whose
``annotations.json`` is in the checkout, read with ``--format alpaca-eval`` and fitted, its
discrete win rate (the fit's win probability against the baseline) and its soft win rate (the
same from the soft-outcome fit, ``ratings.BT(soft=True)``) against the leaderboard's columns.

Usage: ``python benchmarks_perf/peer_numbers.py [--alpaca-eval DIR]``; writes
``results/peer_numbers.csv``.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from peer_reference import compute_mle_elo, fastchat_compute_bt  # noqa: E402

import ratings  # noqa: E402

BATTLES = HERE.parent / "tests" / "data" / "arena_hard_battles_2024_09.csv"
LEADERBOARD = "src/alpaca_eval/leaderboards/data_AlpacaEval_2/" \
              "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"


def centred(s: pd.Series, index) -> pd.Series:
    s = s.loc[index].astype(float)
    return s - s.mean()


def battles_rows() -> list[dict]:
    df = pd.read_csv(BATTLES, dtype=str)
    r = ratings.fit(df, cluster=None)
    elo = pd.Series(r.elo, index=r.models)
    elo, se = elo - elo.mean(), pd.Series(r.se, index=r.models)
    rows = []

    def add(peer, what, diff, tol, note=""):
        rows.append({"data": "arena-hard battles (1,348, 4 models)", "peer": peer, "number": what,
                     "max_abs_diff": float(diff), "tolerance": tol, "note": note})

    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    ds = PairDataset.from_pandas(df)
    for ftol, note in ((1e-9, "its defaults (ftol = gtol = 1e-9)"), (1e-13, "ftol = gtol = 1e-13")):
        bt = BradleyTerry(len(ds.competitors), ftol=ftol, gtol=ftol)
        bt.fit(ds)
        out = bt.compute_ratings_and_cis(ds)
        est = pd.Series(np.asarray(out["ratings"]), index=ds.competitors)
        add("arena-rank 0.1.1", "BT Elo (centred)", (centred(est, elo.index) - elo).abs().max(),
            None if ftol > 1e-12 else 1e-6, note)
    published = pd.Series(np.sqrt(np.asarray(out["variances"])), index=ds.competitors)
    add("arena-rank 0.1.1", "sandwich SE, relative (vs ours --no-cluster)",
        (published.loc[se.index] / se - 1).abs().max(), None,
        "as published: ridge 1e-5 x N on its Hessian")
    h, g = BradleyTerry.compute_hessian_and_covariance(
        bt.params["ratings"], ds.pairs, ds.outcomes, ds.counts, ds.opt_weights, 0.0,
        len(ds.competitors))
    hp = np.linalg.pinv(np.asarray(h))
    sand = pd.Series(np.sqrt(np.diag(hp @ np.asarray(g) @ hp)) * bt.alpha, index=ds.competitors)
    add("arena-rank 0.1.1", "sandwich SE, relative (vs ours --no-cluster)",
        (sand.loc[se.index] / se - 1).abs().max(), 1e-6, "its H and G, no ridge (pseudo-inverse)")
    add("FastChat compute_bt", "BT Elo (centred)",
        (centred(fastchat_compute_bt(df), elo.index) - elo).abs().max(), None,
        "as published: L-BFGS-B stops on SciPy's default ftol")
    add("FastChat compute_bt", "BT Elo (centred)",
        (centred(fastchat_compute_bt(df, converged=True), elo.index) - elo).abs().max(), 1e-6,
        "same loss, ftol = 0, gtol = 1e-12")
    add("arena-hard-auto compute_mle_elo", "BT Elo (centred)",
        (centred(compute_mle_elo(df), elo.index) - elo).abs().max(), 2e-6,
        "scikit-learn lbfgs, tol = 1e-8")
    rc = ratings.fit(df, cluster="question_id")
    ratio = pd.Series(rc.se, index=rc.models).loc[se.index] / se
    rows.append({"data": "arena-hard battles (1,348, 4 models)", "peer": "ours by design",
                 "number": "CR2 by question / per-verdict sandwich SE",
                 "max_abs_diff": float(ratio.max()), "tolerance": None,
                 "note": f"ratio {ratio.min():.2f} to {ratio.max():.2f} (100 questions)"})
    return rows


def _show(repo: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def alpaca_rows(repo: str) -> list[dict]:
    board = pd.read_csv(io.BytesIO(_show(repo, LEADERBOARD)), index_col=0)
    listing = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "-l", "HEAD", "results"],
                             check=True, capture_output=True, text=True).stdout
    wanted = "/weighted_alpaca_eval_gpt4_turbo/annotations.json"
    paths = [ln.split("\t")[1] for ln in listing.splitlines()
             if ln.endswith(wanted) and ln.split()[3] != "-"]
    soft_gap, discrete_gap, n_models, count_gap = 0.0, 0.0, 0, 0
    with tempfile.TemporaryDirectory() as folder:
        for path in paths:
            model = path.split("/")[1]
            if model not in board.index:
                continue
            try:
                data = _show(repo, path)
            except subprocess.CalledProcessError:  # stored out of band in this copy
                continue
            file = Path(folder) / "annotations.json"
            file.write_bytes(data)
            records = json.loads(data)
            if any(r.get("preference") is None for r in records):
                continue
            base, name = records[0]["generator_1"], records[0]["generator_2"]
            if {x["generator_2"] for x in records} != {name} or name == base:
                continue  # the baseline against itself, or a mixed file
            r = ratings.fit(file)
            discrete = 100 * float(np.asarray(r.win_probability(name, base)).ravel()[0])
            log = ratings.read_verdicts(file)
            fitted = ratings.fit(file, model=ratings.BT(soft=True))
            soft = 100 * float(np.asarray(fitted.win_probability(name, base)).ravel()[0])
            row = board.loc[model]
            discrete_gap = max(discrete_gap, abs(discrete - row["discrete_win_rate"]))
            soft_gap = max(soft_gap, abs(soft - row["win_rate"]))
            wins = int((log.verdicts["winner"] == "B").sum())
            count_gap = max(count_gap, abs(wins - int(row["n_wins"])))
            n_models += 1
    data = f"AlpacaEval 2.0 leaderboard ({n_models} models x 805)"
    return [{"data": data, "peer": "AlpacaEval (published)",
             "number": "discrete win rate (%), fit's win probability vs the baseline",
             "max_abs_diff": discrete_gap, "tolerance": 1e-8,
             "note": f"n_wins max gap {count_gap}"},
            {"data": data, "peer": "AlpacaEval (published)",
             "number": "soft win rate (%), soft-outcome fit's win probability vs the baseline",
             "max_abs_diff": soft_gap, "tolerance": 1e-8,
             "note": "ratings.BT(soft=True): the preference as A's score"}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpaca-eval", metavar="DIR")
    args = parser.parse_args()
    rows = battles_rows()
    if args.alpaca_eval:
        rows += alpaca_rows(args.alpaca_eval)
    table = pd.DataFrame(rows)
    out = HERE / "results" / "peer_numbers.csv"
    table.to_csv(out, index=False)
    with pd.option_context("display.width", 250, "display.max_colwidth", 70):
        print(table.to_string(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
