"""Issue 15 item 12: the Python API reference (docs/api.md, rendered from the docstrings by
mkdocstrings), the ``dcsim completion`` scripts, and one version, recorded in CHANGELOG.md."""

import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dcsim
from conftest import ROOT, dcsim_cli

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

API_PAGE = ROOT / "docs" / "api.md"


def test_every_public_name_is_on_the_api_page_with_a_docstring():
    """Read as mkdocstrings reads them (griffe, from the source and the extension's stub)."""
    import griffe

    package = griffe.load("dcsim", search_paths=[str(ROOT / "python")], allow_inspection=False)
    directives = set(re.findall(r"^::: (\S+)$", API_PAGE.read_text(), flags=re.M))
    for name in dcsim.__all__:
        assert f"dcsim.{name}" in directives, f"docs/api.md does not document dcsim.{name}"
        docstring = package[name].docstring
        assert docstring is not None and len(docstring.value) > 40, f"dcsim.{name} has no real docstring"
    assert directives <= {f"dcsim.{name}" for name in dcsim.__all__}, "docs/api.md documents a non-public name"


def test_docs_build_without_a_warning(tmp_path):
    """`make docs` (mkdocs build --strict): an unresolved cross-reference, a docstring section
    that does not parse or a page missing from the nav is an error."""
    site = tmp_path / "site"
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert "WARNING" not in p.stderr, p.stderr
    page = (site / "api" / "index.html").read_text()
    for name in dcsim.__all__:
        assert f'id="dcsim.{name}"' in page, f"dcsim.{name} is not rendered on the API page"
    assert "five times a second" in page  # the progress callback's docstring, rendered


# ---------------------------------------------------------------------------------------
# Shell completion
# ---------------------------------------------------------------------------------------


def _bash_complete(script: str, words: list[str], cwd) -> list[str]:
    """What bash offers after typing `words` (the last one being completed) with `script` loaded."""
    program = f"""
source /dev/stdin <<'DCSIM_COMPLETION'
{script}
DCSIM_COMPLETION
COMP_WORDS=({" ".join(f"'{w}'" for w in words)})
COMP_CWORD={len(words) - 1}
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
_shtab_dcsim
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    env_path = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # where `dcsim` is
    p = subprocess.run(
        ["bash", "--norc", "-c", program],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": env_path, "HOME": str(cwd)},
    )
    assert p.returncode == 0, p.stderr
    return [line for line in p.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_completes_commands_specs_and_reproductions(tmp_path):
    script = dcsim_cli("completion", "bash")
    assert script.returncode == 0, script.stderr
    (tmp_path / "a.toml").write_text("")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "sub").mkdir()
    text = script.stdout
    assert _bash_complete(text, ["dcsim", "sw"], tmp_path) == ["sweep"]
    assert sorted(_bash_complete(text, ["dcsim", "run", ""], tmp_path)) == ["a.toml", "sub"]
    assert _bash_complete(text, ["dcsim", "completion", ""], tmp_path) == ["bash", "zsh"]
    # Reproduction names come from `dcsim reproduce --list`, asked when one is being typed.
    assert sorted(_bash_complete(text, ["dcsim", "reproduce", "phost-fig1"], tmp_path)) == [
        "phost-fig10",
        "phost-fig11",
    ]


def test_zsh_completion_script_is_generated():
    p = dcsim_cli("completion", "zsh")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("#compdef dcsim")
    # A parenthesised pattern, `_files -g '(*.toml)'`, made zsh offer neither the spec files
    # nor the options of the subcommands that take a spec.
    assert "_files -g '*.toml'" in p.stdout and "'(*.toml)'" not in p.stdout
    assert "dcsim reproduce --list" in p.stdout
    if shutil.which("zsh"):
        check = subprocess.run(["zsh", "-n"], input=p.stdout, capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stderr


def test_completion_needs_a_known_shell():
    p = dcsim_cli("completion", "fish")
    assert p.returncode == 2 and "invalid choice: 'fish'" in p.stderr


# ---------------------------------------------------------------------------------------
# Version and changelog
# ---------------------------------------------------------------------------------------

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$")


def test_the_version_is_set_once_and_agrees_everywhere():
    """Cargo.toml's [workspace.package] version is the one source: every crate inherits it,
    pyproject.toml takes it from there (dynamic), and the extension reports it."""
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]
    assert SEMVER.match(workspace), workspace
    for manifest in (ROOT / "crates").glob("*/Cargo.toml"):
        package = tomllib.loads(manifest.read_text())["package"]
        assert package["version"] == {"workspace": True}, f"{manifest} sets its own version"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert dcsim.__version__ == workspace
    assert importlib.metadata.version("dcsim") == workspace
    assert dcsim_cli("--version").stdout.strip() == f"dcsim {workspace}"


def test_changelog_follows_keep_a_changelog():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    headings = re.findall(r"^## (.*)$", text, flags=re.M)
    assert headings and headings[0] == "[Unreleased]", "the first section is [Unreleased]"
    released = []
    for heading in headings[1:]:
        m = re.fullmatch(r"\[(\S+)\] - (\d{4}-\d{2}-\d{2})", heading)
        assert m and SEMVER.match(m.group(1)), f"release heading {heading!r} is not '[X.Y.Z] - YYYY-MM-DD'"
        released.append(tuple(int(x) for x in m.group(1).split("-")[0].split(".")))
    assert released == sorted(released, reverse=True), "releases are listed newest first"
    current = tuple(int(x) for x in dcsim.__version__.split("-")[0].split("."))
    assert all(v <= current for v in released), "a release is newer than the version in Cargo.toml"
    allowed = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    for kind in re.findall(r"^### (.*)$", text, flags=re.M):
        assert kind in allowed, f"### {kind}: Keep a Changelog's kinds are {sorted(allowed)}"
