"""Optional dependencies: the extras of ``pip install 'dcsim[EXTRA]'`` and the one place that
imports their packages, so that a missing one is reported with the command that installs it
instead of a bare ``ModuleNotFoundError``."""

from __future__ import annotations

import importlib
from types import ModuleType

#: The extra (``[project.optional-dependencies]`` in pyproject.toml) that installs each optional
#: top-level package.
EXTRA_OF_PACKAGE = {
    "matplotlib": "plot",
    "ray": "ray",
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed. The message names the package, what needs it,
    and the ``pip install 'dcsim[EXTRA]'`` that installs it; ``extra`` is that extra's name."""

    def __init__(self, package: str, extra: str, needed_for: str) -> None:
        super().__init__(
            f"{needed_for} needs {package}, which is not installed: pip install 'dcsim[{extra}]'", name=package
        )
        self.package = package
        self.extra = extra


def require(module: str, needed_for: str) -> ModuleType:
    """Imports `module` (``"matplotlib.pyplot"``) from an optional dependency, or raises
    :class:`MissingExtraError` naming `needed_for` (``"dcsim reproduce"``) and the extra that
    installs it. A package missing from :data:`EXTRA_OF_PACKAGE` is a programming error."""
    package = module.split(".")[0]
    extra = EXTRA_OF_PACKAGE[package]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        # Only the optional package itself being absent is this error; a module that the
        # installed package fails to import is a broken install, reported as it is.
        if e.name is not None and e.name.split(".")[0] != package:
            raise
        raise MissingExtraError(package, extra, needed_for) from None
