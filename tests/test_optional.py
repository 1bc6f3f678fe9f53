"""Issue 15 item 8: a missing optional dependency is named with the ``pip install 'dcsim[EXTRA]'``
that installs it (one helper, dcsim.optional, used wherever an optional package is imported),
and the reproductions are found through the package in a checkout as in an installation."""

import shutil
import sys

import pytest

from conftest import ROOT, dcsim_cli
from dcsim import cli, optional, reproduce
from dcsim.spec import SpecError

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


@pytest.fixture
def without(monkeypatch):
    """Makes the named top-level packages unimportable, as if they were not installed."""

    def hide(*packages: str) -> None:
        for name in list(sys.modules):
            if name.split(".")[0] in packages:
                monkeypatch.delitem(sys.modules, name)
        for package in packages:
            monkeypatch.setitem(sys.modules, package, None)

    return hide


def test_every_optional_package_is_in_the_extra_that_the_hint_names():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for package, extra in optional.EXTRA_OF_PACKAGE.items():
        assert any(req.startswith(package) for req in extras[extra]), (package, extra)


def test_require_names_the_extra_and_what_needs_it(without):
    without("matplotlib")
    with pytest.raises(optional.MissingExtraError) as e:
        optional.require("matplotlib.pyplot", "plotting")
    assert str(e.value) == "plotting needs matplotlib, which is not installed: pip install 'dcsim[plot]'"
    assert isinstance(e.value, ImportError) and e.value.extra == "plot"


def test_require_reports_a_broken_install_as_it_is(monkeypatch):
    """A package that is there but fails to import one of its own dependencies is not 'missing'."""

    def broken(name):
        raise ModuleNotFoundError("No module named 'kiwisolver'", name="kiwisolver")

    monkeypatch.setattr(optional.importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError) as e:
        optional.require("matplotlib", "plotting")
    assert not isinstance(e.value, optional.MissingExtraError)


@pytest.fixture
def tiny_experiments(tmp_path, monkeypatch):
    d = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments" / "foundation", d / "foundation")
    monkeypatch.setenv("DCSIM_EXPERIMENTS", str(d))
    return d


def test_reproduce_without_matplotlib_says_which_extra_before_simulating(without, tiny_experiments, tmp_path, capsys):
    without("matplotlib")
    out = tmp_path / "results"
    code = cli.main(["reproduce", "foundation-dctcp-vs-tcp", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "error: dcsim reproduce foundation-dctcp-vs-tcp (its figure) needs matplotlib" in err
    assert "pip install 'dcsim[plot]'" in err
    assert not (out / "_runs").exists()  # nothing simulated


def test_sweep_on_ray_without_ray_says_which_extra(without, small_spec, tmp_path, capsys):
    without("ray")
    spec = tmp_path / "sweep.toml"
    spec.write_text(small_spec.read_text() + '\n[sweep]\n"workload.load" = [0.3, 0.5]\n')
    code = cli.main(["sweep", str(spec), "--ray", "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2
    assert "error: --ray needs ray, which is not installed: pip install 'dcsim[ray]'" in capsys.readouterr().err


def test_plot_helpers_without_matplotlib_say_which_extra(without):
    from dcsim import plot

    without("matplotlib")
    with pytest.raises(optional.MissingExtraError, match=r"pip install 'dcsim\[plot\]'"):
        plot.pyplot()


def test_experiments_are_found_through_the_package(monkeypatch):
    """In a checkout, dcsim/experiments is a link to experiments/; it resolves to the real folder."""
    monkeypatch.delenv("DCSIM_EXPERIMENTS", raising=False)
    assert (ROOT / "python" / "dcsim" / "experiments").is_symlink()
    assert reproduce.experiments_dir() == ROOT / "experiments"


def test_a_missing_experiments_folder_is_an_error_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("DCSIM_EXPERIMENTS", str(tmp_path / "nowhere"))
    with pytest.raises(SpecError, match="DCSIM_EXPERIMENTS=.*nowhere.* is not a folder"):
        reproduce.experiments_dir()
    p = dcsim_cli("reproduce", "--list")
    assert p.returncode == 2 and "Traceback" not in p.stderr and "is not a folder" in p.stderr
