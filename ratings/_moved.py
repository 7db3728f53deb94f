"""Module paths of earlier releases, kept for one more release (removed in
:data:`~ratings.core.deprecation.REMOVED_IN`).

Importing an old path warns (:class:`DeprecationWarning`, naming the new place and the release
that removes the old one) and gives a *proxy*: a small module of its own whose ``__getattr__``
(PEP 562) hands out the names of the module at the new place (``import ratings.crowd`` gives a
proxy of :mod:`ratings.models.crowd.likelihood`). The new module is left as it is: its
``__spec__`` names it, so ``importlib.reload`` of it reloads it, and the proxy follows.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

from ratings.core.deprecation import REMOVED_IN

__all__ = ["MOVED", "add_moved", "install"]

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
    "ratings.api.style": "ratings.models.style",
    "ratings.audit.report": "ratings.audit.judge_audit",
    "ratings.bounds": "ratings.core.bounds",
    "ratings.bt": "ratings.models.bt",
    "ratings.check_judges": "ratings.scopes.check_judges",
    "ratings.cli.demo": "ratings.cli.commands.demo",
    "ratings.cli.style_features": "ratings.cli.commands.style_features",
    "ratings.cli_flags": "ratings.cli.flags",
    "ratings.cli_notes": ("ratings.cli.notes", "ratings.api.loading"),
    "ratings.codes": "ratings.core.rows",
    "ratings.combine": "ratings.scopes.combine",
    "ratings.counts": "ratings.data.counts",
    "ratings.crowd": "ratings.models.crowd.likelihood",
    "ratings.crowd_onejudge": "ratings.models.crowd.onejudge",
    "ratings.crowd_prior": "ratings.models.crowd.prior",
    "ratings.crowd_report": "ratings.models.crowd.judge_table",
    "ratings.distributed": "ratings.data.dask",
    "ratings.engine": "ratings.kernels.engine",
    "ratings.example": "ratings.datasets.example",
    "ratings.errors": "ratings.core.errors",
    "ratings.firth": "ratings.models.firth",
    "ratings.graph": "ratings.models.existence",
    "ratings.judge_effects": "ratings.models.judge_effects",
    "ratings.judges": ("ratings.models.crowd.quality", "ratings.scopes.judge_files"),
    "ratings.memory": "ratings.core.memory",
    "ratings.models.crowd.report": "ratings.models.crowd.judge_table",
    "ratings.optim": ("ratings.models.newton", "ratings.core.linalg"),
    "ratings.plot_audit": "ratings.plot.audit",
    "ratings.plot_diagnostics": "ratings.plot.diagnostics",
    "ratings.registry": "ratings.scopes.registry",
    "ratings.rubric": "ratings.scopes.rubric",
    "ratings.scale": "ratings.scopes.scale",
    "ratings.schema": "ratings.core.schema",
    "ratings.separation": "ratings.models.separation",
    "ratings.simulate": "ratings.datasets.simulate",
    "ratings.slots": "ratings.data.slots",
    "ratings.style": "ratings.features",
    "ratings.uncertainty": "ratings.inference.covariance",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str | tuple[str, ...]) -> None:
        self.new = (new,) if isinstance(new, str) else new

    def create_module(self, spec) -> ModuleType:
        warnings.warn(f"`{spec.name}` moved to `{' and '.join(self.new)}`; the old path will be "
                      f"removed in ratings {REMOVED_IN}.", DeprecationWarning,
                      stacklevel=2)  # fmt: skip
        return ModuleType(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        """Make ``module`` a proxy of the new modules (the first that has a name gives it)."""
        new = self.new

        def __getattr__(name: str):
            for target in new:
                found = importlib.import_module(target)
                if hasattr(found, name):
                    return getattr(found, name)
            raise AttributeError(f"module {module.__name__!r} (moved to "
                                 f"{' and '.join(new)}) has no attribute {name!r}")  # fmt: skip

        def __dir__() -> list[str]:
            return sorted({n for target in new for n in dir(importlib.import_module(target))})

        for target in new:  # imported now, so that a missing module fails at the import
            importlib.import_module(target)
        module.__getattr__ = __getattr__
        module.__dir__ = __dir__
        module.__doc__ = f"Deprecated path of {' and '.join(new)} (removed in {REMOVED_IN})."


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


def add_moved(paths: dict[str, str | tuple[str, ...]]) -> None:
    """Old module paths of a package built on ``ratings`` (``sampling``'s), kept the same way:
    each warns, naming its new place and :data:`~ratings.core.deprecation.REMOVED_IN`."""
    MOVED.update(paths)
    install()
