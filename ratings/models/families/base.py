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
  ``k`` that :func:`ratings.kernels.engine.kernels` chose and calls its own kernel there. Rows
  give d_r as ``theta[ii[r]] - theta[jj[r]]``: the strengths and the row's models on the
  collapsed-counts fast path, or the design's predictors with a zero appended
  (``ii = arange(R)``, ``jj = R``) on a design with covariates;
* its own parameters, one per *slot* (``extra[slot[r]]`` acts on row r; Crowd-BT's eta per
  judge, the slot is the row's judge; a tie parameter would be one slot for every row):
  :meth:`~Family.n_extra` (how many for a board's judges; 0: none), :attr:`~Family.start`,
  :attr:`~Family.lower` and :attr:`~Family.upper` (the box the projected Newton method keeps
  them in), and the score and information on them in :class:`RowTerms`' ``*_x`` columns;
* :attr:`~Family.ties_in_likelihood`: whether ties are part of the likelihood (Bradley-Terry:
  a tie is one observation with outcome 1/2) or left out (Crowd-BT conditions on decisive
  verdicts).

Priors or penalties on the family's parameters (Crowd-BT's Beta prior on eta) are a penalty of
the fit (:mod:`ratings.models.crowd.prior`), not part of the family.

A new family (Davidson's or Rao-Kupper's tie model, say) is a module here with its
:class:`Family` instance, and its row kernel added to :mod:`ratings.kernels.fit` and
:mod:`ratings.kernels.fit_ref` with the same nine outputs; ``docs/architecture.md`` walks
through one.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["Family", "RowTerms", "no_extra"]


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


def no_extra(nll: float, score: NDArray[np.float64], info: NDArray[np.float64],
             meat: NDArray[np.float64]) -> RowTerms:  # fmt: skip
    """The :class:`RowTerms` of a family without parameters of its own."""
    e = _EMPTY
    return RowTerms(nll, score, e, info, e, e, meat, e, e)


class Family(Protocol):
    """An outcome family (see the module notes for what each member means)."""

    name: str
    label: str
    ties_in_likelihood: bool
    start: float
    lower: float
    upper: float

    def n_extra(self, n_judges: int) -> int:
        """Parameters of the family's own on a board with ``n_judges`` judges."""
        ...

    def row_terms(self, k, theta: NDArray[np.float64], extra: NDArray[np.float64],
                  ii: NDArray[np.int64], jj: NDArray[np.int64], slot: NDArray[np.int64],
                  wi: NDArray[np.float64], wj: NDArray[np.float64], tt: NDArray[np.float64],
                  with_meat: bool) -> RowTerms:  # fmt: skip
        """Per-row terms at d_r = theta[ii[r]] - theta[jj[r]] and the family's parameters
        ``extra`` (row r's is ``extra[slot[r]]``), with kernels ``k``."""
        ...
