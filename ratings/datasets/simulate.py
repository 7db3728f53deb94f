"""Draw verdicts from known strengths: ground truth for examples, coverage tests and sampling.

The generative model, per match of models a and b on task t judged by k:

* submission quality: d = s_a - s_b + u_{a,t} - u_{b,t}, with u ~ N(0, task_sd^2) drawn once per
  (model, task) submission, so verdicts on one task are dependent (the reason to cluster);
* judge effects (optional): judge k adds beta_k to the log-odds of the submission in slot A
  (position bias) and gamma_k (own_k(a) - own_k(b)) for models of its own family (self-
  preference), so d becomes d + beta_k + gamma_k (own_k(a) - own_k(b));
* judge noise (Crowd-BT): the judge sees the true order with probability eta_k,
  p = eta_k sigma(d) + (1 - eta_k) sigma(-d);
* ties: P(tie) = 4 tie_rate p (1 - p), P(A) = p - P(tie) / 2, so E[y] = p with a tie counted as
  y = 1/2 (valid for ``tie_rate <= 0.5``).

Task effects u shift the log-odds of one submission, which makes verdicts on a task dependent but
also flattens the marginal win probability (the Bradley-Terry fit then estimates attenuated,
population-averaged strengths). ``task_corr`` makes verdicts dependent *without* changing any
marginal probability: the uniform draw behind each verdict is Phi(z) with
z = sqrt(rho) (v_{a,t} - v_{b,t}) / sqrt(2) + sqrt(1 - rho) e, v and e standard normal, so
verdicts sharing a submission are correlated while E[y] = p exactly (a Gaussian copula). Use it
where the truth must be the Bradley-Terry parameter itself (coverage studies).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.special import expit

__all__ = ["random_matches", "simulate_rubric", "simulate_verdicts", "submission_effects"]


def submission_effects(models: list[str], tasks: list[str], sd: float, *, seed: int = 0
                       ) -> pd.Series:  # fmt: skip
    """Per-(model, task_id) submission effects u ~ N(0, sd^2), indexed by (model, task_id)."""
    rng = np.random.default_rng(seed)
    index = pd.MultiIndex.from_product([models, tasks], names=["model", "task_id"])
    return pd.Series(rng.normal(0.0, sd, len(index)), index=index, name="effect")


def simulate_rubric(
    strengths: Mapping[str, float] | pd.Series,
    tasks: list[str],
    n_checks: int,
    *,
    effects: pd.Series | None = None,
    difficulty_sd: float = 1.0,
    discrimination: float = 1.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Binary rubric checks per submission: P(pass) = sigma(a s_model + u_{model,task} - b_check).

    ``a`` is ``discrimination``: how strongly a check separates models of different strength.

    Returns ``task_id, model, check_id, passed`` with one row per (task, model, check); check
    difficulties b ~ N(0, difficulty_sd^2) per (task, check).
    """
    rng = np.random.default_rng(seed)
    s = pd.Series(strengths, dtype=np.float64)
    grid = pd.MultiIndex.from_product([tasks, list(s.index), range(n_checks)],
                                      names=["task_id", "model", "check"]).to_frame(index=False)
    b = rng.normal(0.0, difficulty_sd, (len(tasks), n_checks))
    t_code = pd.Index(tasks).get_indexer(grid["task_id"])
    skill = discrimination * s.reindex(grid["model"]).to_numpy()
    logit = skill - b[t_code, grid["check"].to_numpy()]
    if effects is not None:
        logit += effects.reindex(pd.MultiIndex.from_frame(grid[["model", "task_id"]])).to_numpy()
    grid["passed"] = rng.random(len(grid)) < expit(logit)
    grid["check_id"] = "c" + grid["check"].astype(str)
    return grid[["task_id", "model", "check_id", "passed"]]


def random_matches(
    models: list[str],
    n: int,
    *,
    n_tasks: int,
    judges: list[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Uniformly random pairs on random tasks, judges in turn, A/B order random.

    Returns a frame with ``task_id``, ``model_a``, ``model_b``, ``judge``.
    """
    if len(models) < 2:
        raise ValueError(f"Need at least two models; got {len(models)}.")
    rng = np.random.default_rng(seed)
    m = len(models)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m  # uniform over the other m - 1 models
    judges = judges or ["judge"]
    names = np.asarray(models, dtype=object)
    return pd.DataFrame(
        {
            "task_id": np.char.add("task-", rng.integers(0, n_tasks, n).astype(str)).astype(object),
            "model_a": names[a],
            "model_b": names[b],
            "judge": np.asarray(judges, dtype=object)[np.arange(n) % len(judges)],
        }
    )


def _per_judge(matches: pd.DataFrame, value, what: str) -> np.ndarray:
    """A per-verdict array from a float or a {judge: value} mapping (0 for judges not listed)."""
    if isinstance(value, int | float):
        return np.full(len(matches), float(value))
    if "judge" not in matches.columns:
        raise ValueError(f"`{what}` per judge needs a `judge` column in `matches`.")
    return pd.Series(value, dtype=np.float64).reindex(matches["judge"]).fillna(0.0).to_numpy()


def _judge_effects(matches: pd.DataFrame, position_bias, self_preference,
                   families: Mapping[str, str] | None) -> np.ndarray:  # fmt: skip
    """beta_k + gamma_k (own_k(a) - own_k(b)) per verdict (zeros when neither is given)."""
    out = np.zeros(len(matches))
    if position_bias is not None:
        out += _per_judge(matches, position_bias, "position_bias")
    if self_preference is not None:
        if families is None or "judge" not in matches.columns:
            raise ValueError("`self_preference` needs `families` and a `judge` column.")
        fam = pd.Series(dict(families), dtype=object)
        judge = fam.reindex(matches["judge"]).to_numpy()
        own_a = (fam.reindex(matches["model_a"]).to_numpy() == judge) & pd.notna(judge)
        own_b = (fam.reindex(matches["model_b"]).to_numpy() == judge) & pd.notna(judge)
        gamma = _per_judge(matches, self_preference, "self_preference")
        out += gamma * (own_a.astype(np.float64) - own_b.astype(np.float64))
    return out


def _copula_uniforms(matches: pd.DataFrame, rho: float, latents: pd.Series | None,
                     rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """Uniforms Phi(z), z = sqrt(rho) (v_a - v_b) / sqrt(2) + sqrt(1 - rho) e."""
    from scipy.special import ndtr

    a = pd.MultiIndex.from_arrays([matches["model_a"], matches["task_id"]])
    b = pd.MultiIndex.from_arrays([matches["model_b"], matches["task_id"]])
    if latents is None:
        keys = a.append(b).unique()
        latents = pd.Series(rng.standard_normal(len(keys)), index=keys)
    va, vb = latents.reindex(a).to_numpy(), latents.reindex(b).to_numpy()
    if np.isnan(va).any() or np.isnan(vb).any():
        raise ValueError("`latents` has no value for some (model, task_id) in `matches`.")
    z = np.sqrt(rho) * (va - vb) / np.sqrt(2.0) + np.sqrt(1.0 - rho) * rng.standard_normal(len(va))
    return ndtr(z)


def simulate_verdicts(
    matches: pd.DataFrame,
    strengths: Mapping[str, float] | pd.Series,
    *,
    judge_eta: Mapping[str, float] | None = None,
    task_sd: float = 0.0,
    tie_rate: float = 0.0,
    seed: int = 0,
    effects: pd.Series | None = None,
    task_corr: float = 0.0,
    latents: pd.Series | None = None,
    position_bias: Mapping[str, float] | float | None = None,
    self_preference: Mapping[str, float] | float | None = None,
    families: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Add a ``winner`` column (``"A"``, ``"B"``, ``"tie"``) drawn from the model above.

    Parameters
    ----------
    matches : pandas.DataFrame
        ``model_a``, ``model_b`` and, when used, ``task_id`` and ``judge``.
    strengths : mapping or Series
        True natural-log strengths by model (Elo / (400 / ln 10)).
    judge_eta : mapping, optional
        Probability that each judge reports the true order (default 1 for every judge).
    task_sd : float, default=0.0
        Standard deviation of the per-(model, task) submission effect, in log-strength units.
    tie_rate : float, default=0.0
        Tie propensity in [0, 0.5]; the tie share is about ``tie_rate * E[4 p (1 - p)]``.
    seed : int, default=0
    effects : pandas.Series, optional
        Submission effects u indexed by (model, task_id), e.g. from :func:`submission_effects`,
        to share them between calls (scopes judged on the same submissions); replaces
        ``task_sd``.
    task_corr : float, default=0.0
        Copula correlation rho in [0, 1) between verdicts that share a submission (see the
        module notes); marginal win probabilities are unchanged.
    latents : pandas.Series, optional
        The copula's standard-normal v per (model, task_id), to share it between calls (e.g.
        scopes judged on the same submissions); drawn when omitted.
    position_bias : mapping or float, optional
        Log-odds added in favour of the submission in slot A, per judge (a float: every judge).
    self_preference : mapping or float, optional
        Log-odds added in favour of a model of the judge's own family, per judge (a float: every
        judge); needs ``families``.
    families : mapping, optional
        Family of each model and judge name (names not listed have none; a judge favours only
        models of its own family).

    Returns
    -------
    pandas.DataFrame
        A copy of ``matches`` with ``winner``.
    """
    if not 0.0 <= tie_rate <= 0.5:
        raise ValueError(f"`tie_rate` must be in [0, 0.5]; got {tie_rate!r}.")
    if task_sd < 0:
        raise ValueError(f"`task_sd` must be >= 0; got {task_sd!r}.")
    rng = np.random.default_rng(seed)
    s = pd.Series(strengths, dtype=np.float64)
    missing = sorted(set(matches["model_a"]).union(matches["model_b"]) - set(s.index))
    if missing:
        raise ValueError(f"`strengths` has no value for {missing[:5]}.")
    d = s.reindex(matches["model_a"]).to_numpy() - s.reindex(matches["model_b"]).to_numpy()
    if task_sd > 0 or effects is not None:
        subs = pd.concat([matches[["model_a", "task_id"]].set_axis(["model", "task_id"], axis=1),
                          matches[["model_b", "task_id"]].set_axis(["model", "task_id"], axis=1)])
        if effects is None:
            keys = pd.MultiIndex.from_frame(subs.drop_duplicates())
            effects = pd.Series(rng.normal(0.0, task_sd, len(keys)), index=keys)
        u = effects.reindex(pd.MultiIndex.from_frame(subs)).to_numpy()
        if np.isnan(u).any():
            raise ValueError("`effects` has no value for some (model, task_id) in `matches`.")
        d = d + u[: len(matches)] - u[len(matches):]
    d = d + _judge_effects(matches, position_bias, self_preference, families)
    p = expit(d)
    if judge_eta is not None:
        eta = pd.Series(judge_eta, dtype=np.float64).reindex(matches["judge"]).to_numpy()
        if np.isnan(eta).any():
            raise ValueError("`judge_eta` has no value for some judges in `matches`.")
        p = eta * p + (1.0 - eta) * (1.0 - p)
    p_tie = 4.0 * tie_rate * p * (1.0 - p)
    if not 0.0 <= task_corr < 1.0:
        raise ValueError(f"`task_corr` must be in [0, 1); got {task_corr!r}.")
    if task_corr > 0:
        u01 = _copula_uniforms(matches, task_corr, latents, rng)
    else:
        u01 = rng.random(len(matches))
    winner = np.where(u01 < p - p_tie / 2, "A", np.where(u01 < p + p_tie / 2, "tie", "B"))
    out = matches.copy()
    out["winner"] = winner.astype(object)
    return out
