"""dcsim: a fast, faithful packet-level simulator of datacenter transports.

>>> import dcsim
>>> r = dcsim.run("examples/quickstart.toml", workload__flows=2000)  # doctest: +SKIP
>>> r.summary["mean_slowdown"], r.flows.head()                     # doctest: +SKIP
"""

from ._dcsim import CheckpointError, __version__, build_profile
from .api import ProgressCallback, run
from .optional import MissingExtraError
from .result import Result, format_summary, read_metadata
from .spec import ResolvedSpec, SpecError, UnusedField, UnusedFieldWarning, resolve
from .sweep import StaleRunsWarning, load

__all__ = [
    "__version__",
    "build_profile",
    "run",
    "ProgressCallback",
    "resolve",
    "Result",
    "ResolvedSpec",
    "SpecError",
    "UnusedField",
    "UnusedFieldWarning",
    "MissingExtraError",
    "format_summary",
    "read_metadata",
    "load",
    "StaleRunsWarning",
    "CheckpointError",
]
