"""Property tests of the Python spec layer (issue 13): any TOML text or Python tree a user can
hand to dcsim — valid, wrong types, NaN, dates, deep nesting, unknown keys, overrides — is
either resolved or rejected with a SpecError naming where; never another exception. The
resolved spec resolves again to itself. `make fuzz` runs many more examples
(DCSIM_HYPOTHESIS_EXAMPLES)."""

import datetime
import json
import math
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dcsim
from dcsim.spec import SpecError

EXAMPLES = int(os.environ.get("DCSIM_HYPOTHESIS_EXAMPLES", "200"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

SECTIONS = ["topology", "workload", "transport", "dctcp", "pfabric", "phost", "fastpass", "pias", "output", "engine"]
KEYS = {
    "topology": ["kind", "racks", "hosts_per_rack", "spines", "k", "hosts", "host_link_gbps", "core_link_gbps"],
    "workload": ["flow_sizes", "load", "flows", "matrix", "arrivals", "deadline_mean_us", "tenants", "stop_when"],
    "transport": ["protocol", "initial_window_pkts", "max_window_pkts", "rto", "min_rto_us", "dupack_threshold"],
    "pfabric": ["queues", "thresholds", "reserved_bytes", "buffer_bytes", "priority"],
    "pias": ["queues", "thresholds", "ecn", "threshold_method"],
}

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["websearch", "dctcp", "pias", "fat-tree", "36KB", "1.5MB", "bimodal", "incast"]),
    st.dates(),
    st.datetimes(),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


@st.composite
def trees(draw):
    tree = {}
    for section in draw(st.lists(st.sampled_from(SECTIONS), max_size=5, unique=True)):
        keys = KEYS.get(section, ["x"]) + [draw(st.text(min_size=1, max_size=10))]
        tree[section] = {k: draw(values) for k in draw(st.lists(st.sampled_from(keys), max_size=4, unique=True))}
    if draw(st.booleans()):
        tree[draw(st.text(min_size=1, max_size=8))] = draw(values)
    return tree


def _resolve_or_reject(spec, overrides=None):
    try:
        r = dcsim.spec.resolve(spec, overrides)
    except SpecError as e:
        assert str(e), "an error says what is wrong"
        return None
    again = dcsim.spec.resolve(json.loads(r.json))
    assert again.json == r.json, "resolution is idempotent"
    return r


@SETTINGS
@given(trees())
def test_any_tree_resolves_or_is_rejected_with_a_spec_error(tree):
    _resolve_or_reject(tree)


@SETTINGS
@given(st.text(max_size=200))
def test_any_toml_text_resolves_or_is_rejected_with_a_spec_error(text):
    _resolve_or_reject(text + "\n")


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["workload.load", "topology.k", "seed", "transport.protocol", "x.y"]), values, max_size=3
    )
)
def test_any_override_resolves_or_is_rejected_with_a_spec_error(overrides):
    _resolve_or_reject({}, overrides)


def test_the_strategies_reach_dates_and_nan():
    # The harness covers what the probe found: a date and a NaN in a tree are SpecErrors.
    for bad in ({"workload": {"load": math.nan}}, {"workload": {"x": datetime.date(2020, 1, 1)}}):
        assert _resolve_or_reject(bad) is None
