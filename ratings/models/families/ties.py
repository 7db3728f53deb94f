"""The tie models as outcome families: Davidson (1970) and Rao & Kupper (1967).

* ``"davidson"``: P(i beats j) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D,
  D = pi_i + pi_j + nu sqrt(pi_i pi_j), nu > 0; the family's parameter is ``phi = log(nu)``.
* ``"rao-kupper"``: P(i beats j) = pi_i / (pi_i + theta pi_j), theta >= 1;
  ``phi = log(theta - 1)``.

One parameter of the family's own, shared by every row (one slot). Both scales put the
boundary "no ties" (nu = 0, theta = 1) at phi = -infinity, where the tie probability vanishes
linearly in nu and in theta - 1 (between equal models it is nu / (2 + nu) and
(theta - 1) / (theta + 1), both sigma(phi - log 2)): on the log scale the likelihood of a small
tie rate is close to quadratic, as a binomial rate's is on its logit, and every value of phi is
a model, so the box is the whole line. A log with no ties has its maximum at the boundary; the
fit is then plain Bradley-Terry (:func:`ratings.fit` says so). With at least one tie and one
decisive verdict the maximum is interior. The row kernels are ``davidson_row_terms`` and
``rao_kupper_row_terms`` (:mod:`ratings.kernels.ties`, twins in :mod:`ratings.kernels.ties_ref`,
both re-exported by the kernel modules :func:`ratings.kernels.engine.kernels` hands out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ratings.models.families.base import Family

__all__ = ["DAVIDSON", "RAO_KUPPER", "TIE_FAMILIES", "TieFamily", "tie_family"]


@dataclass(frozen=True)
class TieFamily(Family):
    """A tie model (see the module notes): a :class:`~ratings.models.families.base.Family`
    with one slot for every row, phi unbounded; ``parameter`` is ``"nu"`` or ``"theta"``,
    ``scale`` its unbounded scale as text."""

    slots: str = "one"
    lower: float = -np.inf
    upper: float = np.inf
    parameter: str = field(kw_only=True)
    scale: str = field(kw_only=True)

    def value(self, phi):
        """The tie parameter (nu, or theta) at ``phi``."""
        return np.exp(phi) if self.parameter == "nu" else 1.0 + np.exp(phi)

    def tie_at_equal(self, phi):
        """P(tie) between two models of equal strength: nu / (2 + nu), (theta - 1) / (theta + 1);
        both are sigma(phi - log 2) on the unbounded scale."""
        return 1.0 / (1.0 + 2.0 * np.exp(-np.asarray(phi, dtype=np.float64)))

    def start_at(self, tie_share: float) -> float:
        """phi where two equal models tie at ``tie_share``: log(2 t / (1 - t)) for both."""
        t = min(max(tie_share, 1e-6), 1.0 - 1e-6)
        return float(np.log(2.0 * t / (1.0 - t)))

    def probabilities(self, d, phi) -> tuple:
        """(P(i beats j), P(j beats i), P(tie)) at linear predictors ``d``."""
        d = np.asarray(d, dtype=np.float64)
        if self.parameter == "nu":
            u = 0.5 * d
            z = np.exp(u) + np.exp(-u) + np.exp(phi)
            return np.exp(u) / z, np.exp(-u) / z, np.exp(phi) / z
        eta = np.logaddexp(0.0, phi)
        pi, pj = 1.0 / (1.0 + np.exp(eta - d)), 1.0 / (1.0 + np.exp(eta + d))
        return pi, pj, 1.0 - pi - pj


DAVIDSON = TieFamily("davidson", "Bradley-Terry, Davidson ties", "davidson_row_terms",
                     parameter="nu", scale="log(nu)")
RAO_KUPPER = TieFamily("rao-kupper", "Bradley-Terry, Rao-Kupper ties", "rao_kupper_row_terms",
                       parameter="theta", scale="log(theta - 1)")
TIE_FAMILIES = {f.name: f for f in (DAVIDSON, RAO_KUPPER)}


def tie_family(name: str) -> TieFamily:
    """The tie family called ``name`` (``"davidson"`` or ``"rao-kupper"``)."""
    return TIE_FAMILIES[name]
