"""Small-sample cluster-robust inference: the CR2 sandwich and Satterthwaite degrees of freedom.

The default clustered interval of :func:`ratings.fit` (``ci="sandwich"``) is the bias-reduced
linearisation "CR2" of Bell & McCaffrey (2002), with a Student t reference whose degrees of
freedom belong to each contrast (Satterthwaite, as in Pustejovsky & Tipton 2018 and R's
clubSandwich: ``vcovCR(type = "CR2")``, ``coef_test(test = "Satterthwaite")``). A model seen on
six tasks gets about five degrees of freedom; a pair of well-connected models several hundred.

Working model
-------------
A verdict with win probability p(beta) (a tie is y = 1/2) has score (y - p) grad p / (p (1 - p)).
With x = grad p / sqrt(p (1 - p)) and e = (y - p) / sqrt(p (1 - p)) these are the normal
equations of a linear model, Fisher information H = sum x x^T, bread M = H^-1 (Bradley-Terry:
x = sqrt(p q) (e_i - e_j); Crowd-BT: grad p also has a column per estimated judge quality eta).
CR2 replaces each cluster's residuals e_g by A_g e_g, A_g = (I - X_g M X_g^T)^(-1/2), so that the
variance estimate is unbiased when the working model holds.

Everything is computed from per-cluster sums. For any power series f,
X_g^T f(X_g M X_g^T) = f(H_g M) X_g^T, with H_g = X_g^T X_g the cluster's information and
g_g = X_g^T e_g its summed score. So the adjusted score is f(H_g M) g_g with
f(lambda) = (1 - lambda)^(-1/2), and an aggregated row standing for n identical verdicts enters
H_g with weight n: nothing is expanded to verdicts. In whitened coordinates (M = L L^T,
S_g = L^T H_g L, whose eigenvalues are the cluster's leverages in [0, 1) and sum to the number of
parameters over clusters), with S_g = Q diag(lambda) Q^T:

* adjusted influence of cluster g: L f(S_g) L^T g_g; CR2 covariance: sum_g of their outer products;
* Satterthwaite degrees of freedom of a contrast c (Pustejovsky & Tipton 2018, working model
  Phi = I): with c' = L^T c, Omega = diag(d_g) - Y Y^T, d_g = c'^T S_g (I - S_g)^-1 c',
  y_g = S_g f(S_g) c', df = (tr Omega)^2 / ||Omega||_F^2, where tr Omega = sum_g c'^T S_g c'
  and ||Omega||_F^2 = sum d_g^2 - 2 sum_g d_g ||y_g||^2 + ||Y^T Y||_F^2 (P x P, no G x G matrix).

The df depend on the clusters' designs, not on their residuals, and omega_g, d_g and y_g are
linear in c before squaring: every contrast's df (the ratings', every pair's) comes from one
basis formed once per distinct cluster design (clusters of identical rows, such as a baseline
met once on every prompt, count once with their number) and one batched product with the
contrasts as a matrix (:mod:`ratings.inference.batched`). Which path runs (the batched exact
formula or the one-direction approximation below) is decided by cost and reported by each
inference's ``df_plan``; a fit's CR2 pieces come from one entry,
:func:`ratings.inference.small.working_inference`, which picks the sparse, exact or series path
(:func:`ratings.inference.cluster.cr2_plan`) and returns one :class:`ClusterInference` whatever
the path (its ``shape``).

Large boards
------------
The exact path costs about sum_g R_g P min(R_g, P) for the clusters' eigen-decompositions
(R_g rows, P parameters) and G P min(G, P) per contrast for the degrees of freedom. Above
:data:`EXACT_BUDGET` (e.g. 200 models on 1,000 tasks) two shortcuts are used instead:

* the adjusted influences come from the binomial series f(M H_g) = sum_k binom(2k, k) / 4^k
  (M H_g)^k applied to each cluster's influence M g_g (one pass over the rows and one G x P
  product per term), run until every cluster's next term is below 1e-10 of its influence
  (measured, or predicted ten times below it from the ratio of the last two terms); a term
  predicted below 1e-5 of the influences is multiplied in single precision (its rounding then
  moves them by under 1e-10); clusters still above it after :data:`SERIES_TERMS` terms
  (leverage near 1) are decomposed exactly;
* the degrees of freedom use each cluster's share pi_g = omega_g / sum omega of the contrast's
  information-weighted variance (omega_g = c^T M H_g M c, exact) and treat the contrast as one
  direction with leverage pi_g in each cluster:
  df = 1 / (sum pi_g^2 + (sum a_g)^2 - sum a_g^2), a_g = pi_g^2 / (1 - pi_g). This is exact when
  the contrast is an eigen-direction of every H_g M (a model seen on k equally informative
  tasks: df = k - 1) and tends to the exact value on balanced boards, where the degrees of
  freedom are large and matter little (checked against the exact path in the tests).

A contrast that lies along a cluster direction of leverage 1 (a model compared on one task
only) has no cluster-robust variance: its variance is reported as infinite and its df as NaN.
The exact path finds these directions in the decompositions; the series never excites one (the
model's score is zero in its only cluster), so the large-board path finds them from the rows:
a model whose rows all lie in one cluster (or, for the reference model, the other models' sum).

References
----------
Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression
with multi-stage samples. Survey Methodology 28(2), 169-181.
Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for cluster-robust variance
estimation and hypothesis testing in fixed effects models. Journal of Business & Economic
Statistics 36(4), 672-683.
Imbens, G. W. & Kolesar, M. (2016). Robust standard errors in small samples: some practical
advice. Review of Economics and Statistics 98(4), 701-712.
"""

from __future__ import annotations

from ratings.inference.cluster import (
    EXACT_BUDGET,
    ClusterInference,
    cluster_inference,
)
from ratings.inference.satterthwaite import reference_contrasts, satterthwaite
from ratings.inference.small import bt_inference
from ratings.inference.stacked import StackedInference
from ratings.inference.working import WorkingRows, bt_rows

__all__ = [
    "EXACT_BUDGET",
    "ClusterInference",
    "StackedInference",
    "WorkingRows",
    "bt_inference",
    "bt_rows",
    "cluster_inference",
    "reference_contrasts",
    "satterthwaite",
]
