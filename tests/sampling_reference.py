"""A plain reference of the planner's pick rule, to check the vectorised search against.

:class:`ReferencePicker` keeps :class:`sampling.picks.picker.Picker`'s state and ranking but picks
by walking the ranked pairs one by one, recomputing each model's allowed tasks from the counts
with Python loops, exactly as :meth:`sampling.picks.picker.Picker.pick` documents the rule:

for the share cap (then without it), for each task level (strictest first), for judged pairs
(a judge both models have used least is left) and then any pair: the first ranked pair whose two
models are under the cap and share a fresh task allowed at that level for both.
"""

from __future__ import annotations

import numpy as np

from sampling.picks.picker import Picker


def allowed_tasks(usable, task_n, plan_task_n, level: int) -> list[set[int]]:
    """Per model, the set of tasks it may play at ``level`` (0, 1, 2, then slack 1, 2, ...)."""
    out = []
    for m in range(usable.shape[0]):
        tasks = [t for t in range(usable.shape[1]) if usable[m, t]]
        if not tasks:
            out.append(set(range(usable.shape[1])))  # no usable task: nothing fresh anyway
            continue
        total_min = min(task_n[m, t] for t in tasks)
        plan_min = min(plan_task_n[m, t] for t in tasks)
        if level == 0:
            at_min = [t for t in tasks if task_n[m, t] == total_min]
            low = min(plan_task_n[m, t] for t in at_min)
            out.append({t for t in at_min if plan_task_n[m, t] == low})
        elif level == 1:
            out.append({t for t in tasks if plan_task_n[m, t] == plan_min
                        and task_n[m, t] <= total_min + 1})  # fmt: skip
        else:
            slack = level - 2
            out.append({t for t in tasks if plan_task_n[m, t] <= plan_min + slack})
    return out


class ReferencePicker(Picker):
    """:class:`Picker` whose :meth:`pick` walks the ranked pairs one at a time, and whose
    exposure target (when a model leaves the balanced phase) is counted from the matches."""

    def _is_cold(self, i: int) -> bool:
        """Fewer than ``min_matches`` matches, or fewer distinct tasks than ``min_matches``
        and than the tasks it can play; a model that cannot play is never cold."""
        b = self.board
        playable = [t for t in range(b.usable.shape[1]) if b.usable[i, t]]
        if not playable:
            return False
        matches = sum(int(b.meet[i, j]) for j in range(b.meet.shape[0]))
        played = [t for t in playable if b.task_n[i, t] > 0]
        return matches < self.k or len(played) < min(self.k, len(playable))

    def pick(self, mode: str):
        pairs, keys, score = self.ranking(mode)
        if pairs.size == 0:
            return None
        ranked = np.lexsort(keys)  # positions in pairs, best first
        order, score = pairs[ranked], score[ranked]
        b = self.board
        fits = self.turns.fits()
        n_plan = self.plan_task_n.sum(axis=1)
        caps = [None] if self.cap is None else [self.cap, None]
        usable = b.usable
        spread = max(
            (int(self.plan_task_n[m, t] - self.plan_task_n[m][usable[m]].min())
             for m in range(usable.shape[0]) for t in range(usable.shape[1]) if usable[m, t]),
            default=0,
        )  # fmt: skip
        for cap in caps:
            for level in range(3 + spread):
                allowed = allowed_tasks(usable, b.task_n, self.plan_task_n, level)
                for judged in (True, False):
                    for k, p in enumerate(order):
                        a, c = int(self.iu[0][p]), int(self.iu[1][p])
                        if cap is not None and (n_plan[a] >= cap or n_plan[c] >= cap):
                            continue
                        if judged and not fits[a, c]:
                            continue
                        fresh = self.feasible.fresh(a, c)
                        tasks = sorted(t for t in allowed[a] & allowed[c] if fresh[t])
                        if tasks:
                            chosen = self._task(a, c, np.array(tasks, dtype=np.int64))
                            return a, c, chosen, float(score[k])
        return None
