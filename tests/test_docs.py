"""The spec reference documents every field the simulator accepts."""

import re

import dcsim
from conftest import ROOT


def _leaves(tree, prefix=""):
    for k, v in tree.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _leaves(v, path + ".")
        else:
            yield path


def test_every_resolved_field_is_documented():
    doc = (ROOT / "docs" / "spec.md").read_text()
    sections = {}
    current = ""
    for line in doc.splitlines():
        m = re.match(r"^#+ `\[(.+)\]`", line)
        if m:
            current = m.group(1)
        m = re.match(r"^\| `([a-z0-9_]+)` \|", line)
        if m:
            sections.setdefault(current, set()).add(m.group(1))
    for path in _leaves(dcsim.resolve({}).tree):
        section, _, key = path.rpartition(".")
        assert key in sections.get(section, set()), f"{path} is not documented in docs/spec.md"


def test_no_committed_figure_predates_the_model():
    """Every figure in docs/figures/ was computed by a model whose results this checkout still
    gives for the protocols it runs: the result digests (crates/dcsim/tests/digests.txt) of
    those protocols' cases are unchanged since its commit, so a change that alters results
    fails here until the figures it touches are drawn again. A commit git does not have (a
    shallow clone) cannot be checked and is skipped, never passed."""
    import subprocess

    import pytest

    from dcsim.reproduce import figure_provenance, results_unchanged_since

    figures = sorted((ROOT / "docs" / "figures").glob("*.csv"))
    assert figures, "docs/figures/ holds no figure data"
    stale, unknown = [], set()
    for csv in figures:
        commits = figure_provenance(csv)
        assert commits, f"{csv.name} does not record the commit of the model that made it"
        for commit, protocols in commits.items():
            known = subprocess.run(
                ["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, check=False
            )
            if known.returncode != 0:
                unknown.add(commit)
                continue
            why = results_unchanged_since(commit, protocols)
            if why:
                stale.append(f"{csv.name} (commit {commit}): {why}")
    assert not stale, "figures older than the model; draw them again:\n" + "\n".join(stale)
    if unknown:
        pytest.skip(f"git does not have commits {sorted(unknown)} (shallow clone?); their figures are unchecked")


def test_figure_provenance_reads_every_commit_with_the_protocols_of_its_runs(tmp_path):
    from dcsim import reproduce as rep
    from dcsim.sweep import plan

    # A reproduction dcsim does not know: every commit of every provenance line, protocols
    # unknown (any change makes it stale).
    unknown = tmp_path / "x.csv"
    unknown.write_text(
        "# reproduction: x\n# commit: 133738d29494\n"
        "# reused: 16 runs from x-paper-runs.csv (commit 2747f696a93d)\n"
        "# rows: one per run, transcribed from y.csv (15 of the 18 runs, commit e980cab2461d), with hashes\n"
        "a,b\n# commit: ffffffffffff\n1,2\n"
    )
    assert rep.figure_provenance(unknown) == dict.fromkeys(["133738d29494", "2747f696a93d", "e980cab2461d"])
    # A figure without a sweep names its protocols; a model-only one has none.
    maxload = tmp_path / "m.csv"
    maxload.write_text("# reproduction: dcpim-max-load\n# scale: quick\n# commit: abc1234\na\n1\n")
    assert rep.figure_provenance(maxload) == {"abc1234": frozenset({"dcpim"})}
    # Reused rows carry the protocols of their own runs; the drawing commit all of the sweep's.
    runs = plan(rep.sweep_path("transports-side-by-side"), scale="paper", warn=False).runs
    pase = next(r.hash for r in runs if r.params["transport.protocol"] == "pase")
    pfabric = next(r.hash for r in runs if r.params["transport.protocol"] == "pfabric")
    (tmp_path / "t-runs.csv").write_text(f"run,seed,commit,v\n{pase},1,aaaaaaa,1\n{pfabric},1,bbbbbbb,2\n")
    drawn = tmp_path / "t.csv"
    drawn.write_text(
        "# reproduction: transports-side-by-side\n# scale: paper\n# commit: ccccccc\n"
        "# reused: 2 runs from t-runs.csv (commit aaaaaaa, bbbbbbb)\nv\n1\n"
    )
    got = rep.figure_provenance(drawn)
    assert got["aaaaaaa"] == {"pase"} and got["bbbbbbb"] == {"pfabric"}
    assert got["ccccccc"] == {"pfabric", "phost", "fastpass", "pias", "pase", "homa", "dcpim"}
