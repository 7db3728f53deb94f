"""The building blocks ``ratings`` offers packages built on it (``sampling`` uses only these and
the public API of :mod:`ratings`): messages, the verdict schema, the memory guard, the thread
and quantile helpers, table reading and atomic writing, style features, simulated verdicts,
the command line's kit for a subcommand (:mod:`ratings.cli.kit`), lazy exports and old module
paths kept as warning proxies (``add_moved``).

Each name is documented where it is defined; this module only gathers them, so that a package
on top depends on one list rather than on the layout of ``ratings``' parts.
"""

from ratings._moved import add_moved
from ratings.api.fitting import parse_anchor
from ratings.api.specs import LEGACY, legacy_specs
from ratings.cli.kit import (
    Command,
    add_command,
    add_input_options,
    add_memory_option,
    add_output_options,
    missing_task_message,
    read_log,
    warn_line,
)
from ratings.core.errors import (
    InvalidVerdictsError,
    PenaltyOnlyWarning,
    format_names,
    format_rows,
    option,
)
from ratings.core.lazy import lazy_exports
from ratings.core.memory import MaxMemory, check_memory, fit_memory
from ratings.core.schema import DETERMINISTIC_JUDGE, ELO_SCALE, require_columns
from ratings.core.tdist import critical_value
from ratings.core.threads import one_blas_thread
from ratings.datasets.simulate import simulate_verdicts
from ratings.io.cells import booleans
from ratings.io.readers import format_of
from ratings.io.writers import write_atomic
from ratings.kernels.cache import ready as kernel_ready
from ratings.models.style import TRANSFORMS, style_columns

__all__ = [
    "DETERMINISTIC_JUDGE",
    "ELO_SCALE",
    "LEGACY",
    "TRANSFORMS",
    "Command",
    "InvalidVerdictsError",
    "MaxMemory",
    "PenaltyOnlyWarning",
    "add_command",
    "add_input_options",
    "add_memory_option",
    "add_moved",
    "add_output_options",
    "booleans",
    "check_memory",
    "critical_value",
    "fit_memory",
    "format_names",
    "format_of",
    "format_rows",
    "kernel_ready",
    "lazy_exports",
    "legacy_specs",
    "missing_task_message",
    "one_blas_thread",
    "option",
    "parse_anchor",
    "read_log",
    "require_columns",
    "simulate_verdicts",
    "style_columns",
    "warn_line",
    "write_atomic",
]
