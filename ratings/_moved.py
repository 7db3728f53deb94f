"""Module paths of earlier releases, kept for one release: importing one warns and gives the
module at its new place (``import ratings.crowd`` gives :mod:`ratings.models.crowd.likelihood`
with a :class:`DeprecationWarning`)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "install"]

#: Old module path -> new one (or the new ones its names went to).
MOVED: dict[str, str | tuple[str, ...]] = {
    "ratings._allocator": "ratings.cli.allocator",
    "ratings._arrays": "ratings.core.arrays",
    "ratings._figures": "ratings.plot.figures",
    "ratings._kernels": "ratings.kernels.fit",
    "ratings._kernels_aggregate": "ratings.kernels.aggregate",
    "ratings._kernels_inference": "ratings.kernels.inference",
    "ratings._kernels_inference_ref": "ratings.kernels.inference_ref",
    "ratings._kernels_ref": "ratings.kernels.fit_ref",
    "ratings._kernels_slots": "ratings.kernels.slots",
    "ratings._tdist": "ratings.core.tdist",
    "ratings._threads": "ratings.core.threads",
    "ratings._warmup": "ratings.api.warmup",
    "ratings.adjust": "ratings.api.adjust",
    "ratings.agreement": "ratings.audit.agreement",
    "ratings.bounds": "ratings.core.bounds",
    "ratings.bt": "ratings.models.bt",
    "ratings.check_judges": "ratings.scopes.check_judges",
    "ratings.cli.demo": "ratings.cli.commands.demo",
    "ratings.cli.style_features": "ratings.cli.commands.style_features",
    "ratings.cli_flags": "ratings.cli.flags",
    "ratings.cli_notes": "ratings.cli.notes",
    "ratings.codes": "ratings.core.rows",
    "ratings.combine": "ratings.scopes.combine",
    "ratings.counts": "ratings.data.counts",
    "ratings.crowd": "ratings.models.crowd.likelihood",
    "ratings.crowd_onejudge": "ratings.models.crowd.onejudge",
    "ratings.crowd_prior": "ratings.models.crowd.prior",
    "ratings.crowd_report": "ratings.models.crowd.report",
    "ratings.distributed": "ratings.data.dask",
    "ratings.engine": "ratings.kernels.engine",
    "ratings.errors": "ratings.core.errors",
    "ratings.firth": "ratings.models.firth",
    "ratings.graph": "ratings.models.existence",
    "ratings.judge_effects": "ratings.models.judge_effects",
    "ratings.judges": ("ratings.models.crowd.quality", "ratings.scopes.judge_files"),
    "ratings.memory": "ratings.core.memory",
    "ratings.optim": "ratings.models.newton",
    "ratings.plot_audit": "ratings.plot.audit",
    "ratings.plot_diagnostics": "ratings.plot.diagnostics",
    "ratings.registry": "ratings.scopes.registry",
    "ratings.rubric": "ratings.scopes.rubric",
    "ratings.scale": "ratings.scopes.scale",
    "ratings.schema": "ratings.core.schema",
    "ratings.separation": "ratings.models.separation",
    "ratings.slots": "ratings.data.slots",
    "ratings.uncertainty": "ratings.inference.covariance",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str | tuple[str, ...]) -> None:
        self.new = (new,) if isinstance(new, str) else new

    def create_module(self, spec) -> ModuleType:
        warnings.warn(f"`{spec.name}` moved to `{' and '.join(self.new)}`; the old path goes "
                      "in the next release.", DeprecationWarning, stacklevel=2)  # fmt: skip
        modules = [importlib.import_module(name) for name in self.new]
        if len(modules) == 1:
            return modules[0]
        merged = ModuleType(spec.name)
        for module in reversed(modules):
            merged.__dict__.update({k: v for k, v in vars(module).items()
                                    if not k.startswith("__")})  # fmt: skip
        return merged

    def exec_module(self, module: ModuleType) -> None:
        """The new module is already executed."""


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the finder of old module paths on :data:`sys.meta_path` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
