"""What an outcome family provides to the one model core.

A fit is a family, a design and a penalty. The design gives each aggregated row r its linear
predictor d_r = s_i - s_j + x_r' beta (strengths, the anchor's removed, plus covariate columns:
style features, judge effects); the family says how the row's outcome counts (wins of i, wins
of j, ties) depend on d_r and on the family's own parameters, and nothing else in the package
needs to know which family it is. The solver (:func:`ratings.models.newton.newton`) and the
inference builder take the family's per-row terms and assemble them with the design.

A family provides:

* :attr:`~Family.name`, :attr:`~Family.label`: the ``model=`` spelling and the name results
  print (``"bt"``, ``"Bradley-Terry"``);
* :meth:`~Family.row_terms`: per row, in the linear predictor, the negative log-likelihood
  (summed over rows), the score and the information, and the sums over each row's verdicts of
  products of per-verdict scores (the per-verdict meat), as a :class:`RowTerms`. The work is a
  numba kernel of :mod:`ratings.kernels.fit` with its NumPy twin of the same name and signature
  in :mod:`ratings.kernels.fit_ref` (tests compare the two); the family takes the kernel module
  ``k`` that :func:`ratings.kernels.engine.kernels` chose and calls its own kernel there
  (:attr:`~Family.kernel`, by the name it has in both modules). Rows
  give d_r as ``theta[ii[r]] - theta[jj[r]]``: the strengths and the row's models on the
  collapsed-counts fast path, or the design's predictors with a zero appended
  (``ii = arange(R)``, ``jj = R``) on a design with covariates;
* its own parameters, one per *slot* (``extra[slot[r]]`` acts on row r; :attr:`~Family.slots`
  says which: none for Bradley-Terry, Crowd-BT's eta per judge, the slot the row's judge, a tie
  model's tie parameter one slot for every row): :meth:`~Family.n_extra` (how many for a
  board's judges; 0: none), :attr:`~Family.start`, :attr:`~Family.lower` and
  :attr:`~Family.upper` (the box the projected Newton method keeps them in), and the score and
  information on them in :class:`RowTerms`' ``*_x`` columns;
* :attr:`~Family.ties_in_likelihood`: whether ties are part of the likelihood (Bradley-Terry:
  a tie is one observation with outcome 1/2) or left out (Crowd-BT conditions on decisive
  verdicts).

Priors or penalties on the family's parameters (Crowd-BT's Beta prior on eta) are a penalty of
the fit (:mod:`ratings.models.crowd.prior`), not part of the family.

Bradley-Terry and Crowd-BT are the :class:`Family` instances :data:`BRADLEY_TERRY` and
:data:`CROWD_BT` below. A new family (Davidson's or Rao-Kupper's tie model, say) is a
:class:`Family` instance too, in a module here where it has more of its own to say
(:mod:`~ratings.models.families.ties`), and its row kernel added to :mod:`ratings.kernels.fit` and
:mod:`ratings.kernels.fit_ref` with the same nine outputs; ``docs/architecture.md`` walks
through one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["BRADLEY_TERRY", "CROWD_BT", "Family", "RowTerms"]


class RowTerms(NamedTuple):
    """A family's terms per row (R rows; the ``*_x`` columns empty for a family without
    parameters of its own).

    ``nll`` is summed over the rows; ``score_d`` and ``score_x`` are the log-likelihood's
    derivatives in the row's linear predictor d and in its slot's family parameter, summed over
    the row's verdicts; ``info_dd``, ``info_dx``, ``info_xx`` the matching negative second
    derivatives; ``meat_dd``, ``meat_dx``, ``meat_xx`` the sums over the row's verdicts of the
    products of per-verdict scores (empty unless asked for).
    """

    nll: float
    score_d: NDArray[np.float64]
    score_x: NDArray[np.float64]
    info_dd: NDArray[np.float64]
    info_dx: NDArray[np.float64]
    info_xx: NDArray[np.float64]
    meat_dd: NDArray[np.float64]
    meat_dx: NDArray[np.float64]
    meat_xx: NDArray[np.float64]


_EMPTY = np.zeros(0)


@dataclass(frozen=True)
class Family:
    """An outcome family (see the module notes for what each member means): ``kernel`` names
    its row kernel in the kernel modules, ``slots`` where its own parameters act: ``"none"``
    (no parameter of its own; the kernel takes no ``extra`` and returns nll, score, information
    and meat), ``"judge"`` (one per judge, the slot of a row its judge; the kernel takes
    ``extra`` and ``slot``) or ``"one"`` (one for every row; the kernel takes it as a number)."""

    name: str
    label: str
    kernel: str
    slots: str = "none"
    ties_in_likelihood: bool = True
    start: float = 0.0
    lower: float = 0.0
    upper: float = 0.0

    def n_extra(self, n_judges: int) -> int:
        """Parameters of the family's own on a board with ``n_judges`` judges."""
        return {"none": 0, "judge": n_judges, "one": 1}[self.slots]

    def row_terms(self, k, theta: NDArray[np.float64], extra: NDArray[np.float64],
                  ii: NDArray[np.int64], jj: NDArray[np.int64], slot: NDArray[np.int64],
                  wi: NDArray[np.float64], wj: NDArray[np.float64], tt: NDArray[np.float64],
                  with_meat: bool) -> RowTerms:  # fmt: skip
        """Per-row terms at d_r = theta[ii[r]] - theta[jj[r]] and the family's parameters
        ``extra`` (row r's is ``extra[slot[r]]``), with kernels ``k``."""
        kernel = getattr(k, self.kernel)
        if self.slots == "judge":
            return RowTerms(*kernel(theta, extra, ii, jj, slot, wi, wj, tt, with_meat))
        if self.slots == "one":
            return RowTerms(*kernel(theta, float(extra[0]), ii, jj, wi, wj, tt, with_meat))
        nll, score, info, meat = kernel(theta, ii, jj, wi, wj, tt, with_meat)
        e = _EMPTY
        return RowTerms(nll, score, e, info, e, e, meat, e, e)


BRADLEY_TERRY = Family("bt", "Bradley-Terry", "bt_row_terms")
"""Bradley-Terry: P(i beats j) = sigma(d), a tie one observation with outcome 1/2 (Bradley &
Terry 1952). No parameters of its own."""

CROWD_BT = Family("crowd-bt", "Crowd-BT", "crowd_row_terms", "judge", ties_in_likelihood=False,
                  start=0.85, lower=0.5, upper=1.0)  # fmt: skip
"""Crowd-BT: judge k reports the true order of a decisive verdict with probability eta_k,
P(i beats j | k) = eta_k sigma(d) + (1 - eta_k) sigma(-d), eta_k in [1/2, 1] (Chen et al.
2013): one eta per judge; ties are outside its likelihood
(:mod:`ratings.models.crowd.likelihood` says why)."""
