"""Settings that would be silently misread: fields without effect (issue 15 item 1), units
that can be misread (item 5) and half-checked sweep specs (item 6). Each is now a warning
naming the field and why, or an error (exit 2) saying what is allowed."""

import warnings

import pytest

import dcsim
from conftest import dcsim_cli, write
from dcsim import sweep
from dcsim.spec import SpecError

FAT_TREE = '[topology]\nkind = "fat-tree"\nk = 4\nspines = 3\nracks = 3\n[workload]\nflows = 50\n'


# ---- item 1: fields without effect ------------------------------------------------------------


def test_cli_warns_of_each_field_without_effect_and_strict_refuses(tmp_path):
    """Issue 15 item 1: `racks` and `spines` on a fat-tree are reported by validate,
    show and run, each on one line naming the field, its value and why; --strict refuses."""
    spec = write(tmp_path, FAT_TREE)
    for command in (["validate"], ["show"], ["run", "--out", tmp_path / "run", "--quiet"]):
        p = dcsim_cli(*command, spec)
        assert p.returncode == 0, p.stderr
        lines = p.stderr.splitlines()
        assert lines == [
            "warning: `topology.racks` = 3 is set but has no effect on this run: read only when "
            '`topology.kind` is "leaf-spine" (this run\'s is "fat-tree")',
            "warning: `topology.spines` = 3 is set but has no effect on this run: read only when "
            '`topology.kind` is "leaf-spine" (this run\'s is "fat-tree")',
        ], command
    for command in (["validate"], ["show"], ["run", "--out", tmp_path / "strict"]):
        p = dcsim_cli(*command, "--strict", spec)
        assert p.returncode == 2, command
        assert p.stderr.startswith("error: strict: the spec sets 2 field(s) without effect"), p.stderr
        assert "`topology.racks` = 3" in p.stderr and "`topology.spines` = 3" in p.stderr
        assert "Traceback" not in p.stderr and p.stdout == ""
    assert not (tmp_path / "strict").exists(), "--strict refuses before anything runs"


def test_show_marks_the_sections_that_do_not_apply(tmp_path):
    """Issue 15 item 1: `dcsim show` of a DCTCP run marks pFabric's, pHost's, ... sections."""
    p = dcsim_cli("show", write(tmp_path, "[workload]\nflows = 10\n"))
    assert p.returncode == 0 and p.stderr == ""
    headers = [line for line in p.stdout.splitlines() if line.startswith("[")]
    assert "[dctcp]" in headers and "[topology]" in headers and "[transport]" in headers
    assert (
        '[pfabric]  # not used by this run: read only when `transport.protocol` is "pfabric" or "las" '
        '(this run\'s is "dctcp")' in headers
    )
    for section in ("phost", "fastpass", "pias", "pase", "workload.bimodal"):
        assert any(h.startswith(f"[{section}]  # not used by this run") for h in headers), section
    # The annotated text is still TOML, and resolves to the same spec.
    assert dcsim.resolve(p.stdout, warn=False).tree == dcsim.resolve({"workload": {"flows": 10}}, warn=False).tree


def test_api_warns_lists_and_refuses_with_strict(tmp_path):
    """Issue 15 item 1: a trace spec's `load` and `flow_sizes`, and fields set in a `base`
    file, are reported through a dedicated warning class and listed on the resolved spec."""
    trace = write(tmp_path, "id,src,dst,size_bytes,start_s\n0,1,0,3000,0\n", "trace.csv")
    write(tmp_path, '[workload]\nload = 0.3\nflow_sizes = "datamining"\n', "base.toml")
    spec = write(tmp_path, f'base = "base.toml"\n[workload]\nmatrix = "{trace}"\nflows = 0\n')
    with pytest.warns(dcsim.UnusedFieldWarning) as caught:
        r = dcsim.resolve(spec)
    assert [w.message.unused.field for w in caught] == ["workload.flow_sizes", "workload.load"]
    assert [u.field for u in r.unused] == ["workload.flow_sizes", "workload.load"]
    assert r.unused[1] == dcsim.UnusedField(
        "workload.load",
        "0.3",
        "`workload.matrix` is a trace, which gives every flow's size, hosts and start time",
    )
    with pytest.raises(SpecError, match=r"strict: the spec sets 2 field\(s\) without effect") as e:
        dcsim.run(spec, strict=True)
    assert e.value.field == "workload.flow_sizes"
    # A field at its default that the spec sets explicitly still counts as set.
    with pytest.warns(dcsim.UnusedFieldWarning, match=r"`pfabric.queues` = 0 is set"):
        dcsim.resolve({"workload": {"flows": 10}, "pfabric": {"queues": 0}})
    # Nothing set without effect: no warning at all.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dcsim.resolve({"transport": {"protocol": "pfabric"}, "pfabric": {"queues": 2}}).unused == []


def test_a_sweep_reports_a_field_once_and_only_when_no_run_uses_it(tmp_path):
    """Issue 15 item 1: `[pfabric]` in a sweep over pfabric and dctcp is used by half the runs
    (not reported); `[phost]` and an axis over `pias.queues` are used by none (reported once)."""
    spec = write(
        tmp_path,
        "[workload]\nflows = 20\n[pfabric]\nrto_us = 50\n[phost]\nfree_tokens = 3\n"
        '[sweep]\n"transport.protocol" = ["pfabric", "dctcp"]\n"pias.queues" = [2, 4]\nseed = [1, 2]\n',
    )
    p = dcsim_cli("sweep", "--dry-run", spec)
    assert p.returncode == 0, p.stderr
    warned = [line for line in p.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 2, p.stderr
    assert warned[0].startswith(
        "warning: `phost.free_tokens` = 3 is set but has no effect on any of the sweep's 8 runs: "
        "in its first run, `[phost]` is read only"
    )
    assert warned[1].startswith(
        "warning: sweep axis `pias.queues` is set but has no effect on any of the sweep's 8 runs"
    )
    assert "8 runs" in p.stdout
    p = dcsim_cli("sweep", "--dry-run", "--strict", spec)
    assert p.returncode == 2 and "error: strict: the spec sets 2 field(s) without effect" in p.stderr
    # The reproductions share settings across figures: no report there.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(sweep.plan(spec, warn=False).runs) == 8


# ---- item 5: units that can be misread --------------------------------------------------------


def test_a_cdf_file_must_declare_its_unit_and_a_byte_cdf_is_read_in_bytes(tmp_path):
    """Issue 15 item 5: a CDF in bytes without a unit line no longer validates (it gave flows
    up to 14.6 GB); declared as bytes it gives flows of that many bytes."""
    rows = "100 1 0\n1000 1 0.5\n10000000 1 1\n"
    cdf = write(tmp_path, rows, "cdf.txt")
    p = dcsim_cli("validate", write(tmp_path, f'[workload]\nflow_sizes = "{cdf}"\n'))
    assert p.returncode == 2
    assert "`workload.flow_sizes`" in p.stderr and "add a line `# unit: packets`" in p.stderr
    cdf.write_text("# unit: packets\n" + rows)
    p = dcsim_cli("validate", tmp_path / "s.toml")
    assert p.returncode == 2 and "10000000 packets (14.6 GB) is implausible" in p.stderr
    cdf.write_text("# unit: bytes\n" + rows)
    r = dcsim.run({"workload": {"flow_sizes": str(cdf), "flows": 200}, "topology": {"kind": "star", "hosts": 8}})
    sizes = r.flows["size_bytes"]
    assert sizes.max() <= 10_000_000 and sizes.min() >= 100
    assert (sizes % 1460 != 0).any(), "sizes in bytes are not rounded to packets"


def test_bit_units_are_refused_where_bytes_are_meant(tmp_path):
    """Issue 15 item 5: "36kb" was read as 36,000 bytes; it is kilobits, so it is refused,
    with the byte units allowed."""
    p = dcsim_cli("validate", write(tmp_path, '[topology]\nbuffer_bytes = "36kb"\n'))
    assert p.returncode == 2
    assert p.stderr.strip() == (
        'error: `topology.buffer_bytes`: "36kb" is ambiguous: "kb" reads as bits in networking (a lower-case b), '
        "and this field is a byte count; write an integer, or a number with a unit: B, kB or KB (1000 B), MB, GB, "
        'KiB (1024 B), MiB or GiB, e.g. "36KB" or "64KiB"'
    )
    assert dcsim.resolve({"topology": {"buffer_bytes": "36KB"}}).get("topology.buffer_bytes") == 36_000
    assert dcsim.resolve({"topology": {"buffer_bytes": "36KiB"}}).get("topology.buffer_bytes") == 36_864


# ---- item 6: sweep specs fully checked --------------------------------------------------------


def test_validate_checks_a_sweeps_axes_and_runs(tmp_path):
    """Issue 15 item 6: `dcsim validate` on a sweep spec checks `[sweep]` (a misspelt axis was
    only caught by `sweep --dry-run`) and every run it expands to."""
    spec = write(tmp_path, '[workload]\nflows = 20\n[sweep]\n"workload.laod" = [0.5, 0.6]\n')
    p = dcsim_cli("validate", spec)
    assert p.returncode == 2
    assert "error: sweep axis `workload.laod` is not a spec field; did you mean `workload.load`?" in p.stderr
    spec.write_text('[workload]\nflows = 20\n[sweep]\n"workload.load" = [0.5, 1.5]\n')
    p = dcsim_cli("validate", spec)
    assert p.returncode == 2 and "`workload.load`" in p.stderr and "1.5" in p.stderr
    spec.write_text('[workload]\nflows = 20\n[sweep]\n"workload.load" = [0.5, 0.6]\nseed = [1, 2, 3]\n')
    p = dcsim_cli("validate", spec)
    assert p.returncode == 0 and p.stdout.strip() == f"{spec}: ok (a sweep of 6 runs over 3 seeds)"


def test_run_and_show_refuse_a_sweep_spec(tmp_path):
    """Issue 15 item 6: `dcsim run` on a sweep spec silently ran its base once."""
    spec = write(tmp_path, '[workload]\nflows = 20\n[sweep]\n"workload.load" = [0.5, 0.6]\n')
    for command in (["run", "--out", tmp_path / "out"], ["show"]):
        p = dcsim_cli(*command, spec)
        assert p.returncode == 2, command
        assert p.stderr.strip() == (
            f"error: {spec} is a sweep spec (it has a [sweep] table, its own or its base's), which describes many "
            "runs: run it with `dcsim sweep` (`--dry-run` lists the runs) or `dcsim.sweep.plan`"
        )
    assert not (tmp_path / "out").exists()
    with pytest.raises(SpecError, match="is a sweep spec") as e:
        dcsim.run(spec)
    assert e.value.field == "sweep"


@pytest.mark.parametrize(
    "axis, message",
    [
        ("{ range = [0.5, 0.8] }", "a range of non-integers needs a step"),
        ("{ range = [0.5, 0.8], step = 0.2 }", "does not end on 0.8 (its last value would be 0.7)"),
        ("{ range = [0.5, 0.8], step = 0.5 }", "does not end on 0.8 (its last value would be 0.5)"),
        ("{ range = [1, 10], step = 2 }", "does not end on 10 (its last value would be 9)"),
    ],
)
def test_a_range_that_would_silently_drop_values_is_an_error(tmp_path, axis, message):
    """Issue 15 item 6: a float range without `step` (or with a step that misses the stop)
    gave fewer runs than written, down to one."""
    spec = write(tmp_path, f'[workload]\nflows = 20\n[sweep]\n"workload.load" = {axis}\n')
    with pytest.raises(SpecError, match=r"sweep axis `workload.load`: ") as e:
        sweep.plan(spec)
    assert message in str(e.value)
    p = dcsim_cli("validate", spec)
    assert p.returncode == 2 and message in p.stderr
    spec.write_text('[workload]\nflows = 20\n[sweep]\n"workload.load" = { range = [0.5, 0.8], step = 0.1 }\n')
    assert sweep.plan(spec).axes["workload.load"] == [0.5, 0.6, 0.7, 0.8]


def test_fields_of_one_section_are_reported_in_one_line(tmp_path):
    """Issue 15 item 1: the fields of another protocol's section are one warning naming each,
    and a run directory's resolved spec.toml (which sets every field) one line in all, not 54."""
    spec = write(tmp_path, "[pase]\nqueues = 4\nprobing = false\n[phost]\nfree_tokens = 2\n[workload]\nflows = 20\n")
    p = dcsim_cli("validate", spec)
    assert p.returncode == 0, p.stderr
    assert sorted(p.stderr.splitlines()) == [
        "warning: 2 fields of `[pase]` (`pase.queues` = 4, `pase.probing` = false) are set but have no effect "
        "on this run: "
        '`[pase]` is read only when `transport.protocol` is "pase" (this run\'s is "dctcp")',
        "warning: `phost.free_tokens` = 2 is set but has no effect on this run: `[phost]` is read only when "
        '`transport.protocol` is "phost" (this run\'s is "dctcp")',
    ]
    assert dcsim_cli("run", spec, "--out", tmp_path / "run", "--quiet").returncode == 0
    p = dcsim_cli("validate", tmp_path / "run" / "spec.toml")
    assert p.returncode == 0, p.stderr
    (line,) = p.stderr.splitlines()
    assert line.startswith("warning: the spec sets every field (a resolved spec, as a run directory's spec.toml)")
    assert "`pase`" in line and "`phost`" in line and "`dctcp`" not in line
    # --strict still lists every field.
    p = dcsim_cli("validate", "--strict", tmp_path / "run" / "spec.toml")
    assert p.returncode == 2 and p.stderr.count("\n  `") > 20
