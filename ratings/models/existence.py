"""Existence of the maximum-likelihood estimate: the win graph must be strongly connected."""

from __future__ import annotations

import numpy as np

from ratings.core.errors import NonIdentifiableError, format_names, option
from ratings.data.comparisons import Comparisons

__all__ = ["DENSE_REACH_MODELS", "check_identifiable", "connected", "win_components", "win_edges",
           "win_matrix"]


def _names(models, idx) -> str:
    """The models at positions ``idx``, for a message."""
    return format_names(models[idx], limit=5)


#: Models up to which the usual case (a strongly connected win graph) is confirmed by two
#: searches over a dense adjacency matrix (M^2 booleans), which is far cheaper than building
#: a sparse graph; other graphs, and larger boards, go to scipy's components (which also
#: name the groups in the message).
DENSE_REACH_MODELS = 4096


def win_edges(rows: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """The win graph's edges (src, dst): i -> j whenever i won or tied against j."""
    beat_i = rows.wi + rows.tt > 0
    beat_j = rows.wj + rows.tt > 0
    return (np.concatenate([rows.ii[beat_i], rows.jj[beat_j]]),
            np.concatenate([rows.jj[beat_i], rows.ii[beat_j]]))  # fmt: skip


def win_components(rows: Comparisons):
    """The win graph (sparse, M x M), the label of each model's strong component, and the
    reachability between the components (``reach[a, b]``: a path from component a to component
    b, each reaching itself)."""
    from scipy.sparse import csr_matrix  # imported on first use: keeps `import ratings` light
    from scipy.sparse.csgraph import connected_components, shortest_path

    m = rows.n_models
    src, dst = win_edges(rows)
    graph = csr_matrix((np.ones(src.size), (src, dst)), shape=(m, m))
    n, labels = connected_components(graph, directed=True, connection="strong")
    cond = csr_matrix((np.ones(src.size), (labels[src], labels[dst])), shape=(n, n))
    return graph, labels, np.isfinite(shortest_path(cond, unweighted=True))


def connected(adj: np.ndarray) -> bool:
    """Is the graph of adjacency ``adj[from, to]`` strongly connected?"""
    return _reaches_all(adj) and _reaches_all(adj.T)


def win_matrix(rows: Comparisons) -> np.ndarray:
    """The win graph's adjacency (M x M booleans, ``[i, j]``: i won or tied against j). When
    every row is its own pair (``i < j``, sorted: the fit's rows of one judge) each cell has
    one row to set it, so it is written row by row, the rows' win flags assigned as they are
    (a third of the edge lists' time on 1,000 models); else from :func:`win_edges`."""
    m, ii, jj = rows.n_models, rows.ii, rows.jj
    key = ii * m + jj
    adj = np.zeros(m * m, dtype=bool)
    if bool(np.all(ii < jj)) and bool(np.all(key[1:] > key[:-1])):
        adj[key] = rows.wi + rows.tt > 0
        adj[jj * m + ii] = rows.wj + rows.tt > 0
    else:
        src, dst = win_edges(rows)
        adj[src * m + dst] = True
    return adj.reshape(m, m)


def _reaches_all(adj: np.ndarray) -> bool:
    """Breadth-first search from node 0 along ``adj[from, to]``: are all nodes reached?"""
    seen = np.zeros(adj.shape[0], dtype=bool)
    seen[0] = True
    frontier = np.zeros(1, dtype=np.int64)
    while frontier.size:
        new = adj[frontier].any(axis=0) & ~seen
        seen |= new
        frontier = np.flatnonzero(new)
    return bool(seen.all())


def check_identifiable(data: Comparisons, remedy: str | None = None) -> None:
    """Raise :class:`NonIdentifiableError` unless the Bradley-Terry MLE exists and is unique.

    The MLE exists exactly when, for every split of the models into two groups, each group has
    at least one win (or tie) against the other: the directed graph with an edge i -> j whenever
    i won or tied against j is strongly connected (Ford 1957; Hunter 2004). The message names
    the models that never lost, never won, or the groups that are disconnected or dominate,
    then what to do: ``remedy``, or by default connect them, drop them or fit with a penalty
    or Firth's reduction.
    """
    m = data.n_models
    if m < 2:
        raise NonIdentifiableError(f"Need at least two models to rate; got {m}.")
    if m <= DENSE_REACH_MODELS and connected(win_matrix(data)):
        return
    from scipy.sparse.csgraph import connected_components

    graph, labels, reach = win_components(data)
    if reach.shape[0] == 1:
        return
    models = data.models
    counts = data.model_counts()
    wins, losses, ties = (counts[c].to_numpy() for c in ("wins", "losses", "ties"))
    played = counts["n_matches"].to_numpy() > 0
    never_lost = np.flatnonzero(played & (losses + ties == 0))
    never_won = np.flatnonzero(played & (wins + ties == 0))
    unplayed = np.flatnonzero(~played)
    n_weak, weak = connected_components(graph, directed=True, connection="weak")

    # Strong components so that a group comes before every group it beat (a DAG order): a
    # group reaches every group the groups it beat reach, and itself besides
    order = np.argsort(-reach.sum(axis=1), kind="stable")
    groups = [[str(models[k]) for k in np.flatnonzero(labels == c)] for c in order]
    parts = []
    if unplayed.size:
        parts.append(f"{unplayed.size} model(s) have no verdicts: {_names(models, unplayed)}")
    if n_weak > 1:
        sizes = np.bincount(weak)
        parts.append(
            f"the board splits into {n_weak} groups never compared with each other "
            f"(sizes {sorted(sizes.tolist(), reverse=True)[:5]}); e.g. "
            f"{_names(models, np.flatnonzero(weak == weak[np.argmin(sizes[weak])]))}"
        )
    if never_lost.size:
        parts.append(f"{never_lost.size} model(s) never lost or tied: {_names(models, never_lost)}")
    if never_won.size:
        parts.append(f"{never_won.size} model(s) never won or tied: {_names(models, never_won)}")
    if not parts or (n_weak == 1 and not never_lost.size and not never_won.size):
        top = groups[0]
        parts.append(
            f"the group {top[:5]}{' and more' if len(top) > 5 else ''} never lost to the other "
            f"{m - len(top)} model(s)"
        )
    raise NonIdentifiableError(
        "The maximum-likelihood ratings do not exist: "
        + "; ".join(parts)
        + ". Their Elo would be infinite. "
        + (remedy or "Add matches that connect them, drop them, or pass a positive "
           f"{option('penalty')} for a ridge-regularised fit or {option('firth', True)} for "
           "Firth's bias-reduced one (either gives these models open intervals)."),
        never_lost=[str(models[k]) for k in never_lost],
        never_won=[str(models[k]) for k in never_won],
        groups=groups,
    )

