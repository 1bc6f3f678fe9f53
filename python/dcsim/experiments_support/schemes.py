"""The display name of every scheme the figures show, in one place: each protocol's, and that
of each variant a figure tells apart by a spec field (pFabric's rate control or number of
queues, pHost's preset or policy, PIAS's ECN, queues and thresholds, PASE's arbitration, rate
control, queues, optimisations and probing). Every figure takes its
series names from :func:`name`; their colours and markers are in :data:`dcsim.plot.SERIES`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Display name of each protocol (``transport.protocol``).
PROTOCOLS: dict[str, str] = {
    "tcp": "TCP",
    "dctcp": "DCTCP",
    "l2dct": "L2DCT",
    "d2tcp": "D2TCP",
    "pase": "PASE",
    "pias": "PIAS",
    "las": "LAS",
    "pfabric": "pFabric",
    "phost": "pHost",
    "fastpass": "Fastpass",
    "dcpim": "dcPIM",
    "ideal": "Ideal",
    "homa": "Homa",
}

#: Display names of variants: (protocol, the spec fields that tell its variants apart) ->
#: {those fields' values: name}.
VARIANTS: dict[tuple[str, tuple[str, ...]], dict[tuple[Any, ...], str]] = {
    # pFabric HotNets'12 §3: pFabric's switches with MinTCP or with line-rate senders.
    ("pfabric", ("pfabric.rate_control",)): {("mintcp",): "MinTCP+pFabric", ("linerate",): "LineRate+pFabric"},
    # pFabric SIGCOMM'13 §6.2, Fig. 17: pFabric over a few strict-priority queues.
    ("pfabric", ("pfabric.queues", "pfabric.threshold_method")): {
        (0, "mg1"): "pFabric",
        (2, "mg1"): "Q=2 (Optimized)",
        (4, "mg1"): "Q=4 (Optimized)",
        (8, "mg1"): "Q=8 (Optimized)",
        (4, "equal-split"): "Q=4 (Equal split)",
    },
    # pHost with the parameters of its authors' simulator (pHost Fig. 3).
    ("phost", ("phost.preset",)): {("paper",): "pHost", ("authors-code",): "pHost (authors' code)"},
    # pHost (CoNEXT'15) §4.4, Fig. 11: fair sharing among tenants.
    ("phost", ("phost.policy",)): {("srpt",): "pHost", ("tenant-fair",): "pHost (tenant-fair)"},
    # PIAS (NSDI'15) §3.2 and §5.2, Figs. 3 and 12: PIAS without ECN.
    ("pias", ("pias.ecn",)): {("per-port",): "PIAS", ("off",): "PIAS without ECN"},
    # PIAS (NSDI'15) §5.2, Fig. 11: the number of queues.
    ("pias", ("pias.queues",)): {(2,): "PIAS, 2 queues", (4,): "PIAS, 4 queues", (8,): "PIAS, 8 queues"},
    # PIAS (NSDI'15) §5.2, Fig. 13: optimised (§3.3 closed form) against equal-split thresholds.
    ("pias", ("pias.queues", "pias.threshold_method")): {
        (2, "closed-form"): "2 queues, optimised",
        (2, "equal-split"): "2 queues, equal split",
        (4, "closed-form"): "4 queues, optimised",
        (4, "equal-split"): "4 queues, equal split",
    },
    # PASE (SIGCOMM'14) §4.2, Fig. 9c: arbitration in earliest-deadline-first order.
    ("pase", ("pase.order",)): {("srpt",): "PASE", ("edf",): "PASE (EDF)"},
    # PASE (SIGCOMM'14) §4.3.1, Fig. 11: early pruning and delegation off.
    ("pase", ("pase.pruning_queue", "pase.delegation")): {
        (4, True): "PASE",
        (0, False): "PASE without optimisations",
    },
    # PASE (SIGCOMM'14) §4.3.1, Fig. 12a: end-to-end arbitration against the end hosts' only.
    ("pase", ("pase.arbitration",)): {("end-to-end",): "PASE", ("local",): "PASE, local arbitration"},
    # PASE (SIGCOMM'14) §4.3.2, Fig. 12b: the number of priority queues.
    ("pase", ("pase.queues",)): {
        (3,): "PASE, 3 queues",
        (4,): "PASE, 4 queues",
        (6,): "PASE, 6 queues",
        (8,): "PASE, 8 queues",
    },
    # PASE (SIGCOMM'14) §4.3.2, Fig. 13a: every flow a DCTCP source in its arbitrated queue.
    ("pase", ("pase.rate_control",)): {("pase",): "PASE", ("dctcp",): "PASE-DCTCP"},
    # PASE (SIGCOMM'14) §4.3.2: the lowest queue probing, or sending with a window of one packet.
    ("pase", ("pase.probing",)): {(True,): "PASE", (False,): "PASE without probing"},
}


def name(protocol: str, variant: Mapping[str, Any] | None = None) -> str:
    """The display name of `protocol`, or of its variant given by `variant` (spec field ->
    value, e.g. ``{"pfabric.rate_control": "linerate"}``). Fields that tell no variant of this
    protocol apart are ignored (a TCP run's ``pfabric.rate_control``), so a figure can pass
    the same fields for every run."""
    if protocol not in PROTOCOLS:
        raise KeyError(f"no display name for protocol {protocol!r}")
    given = dict(variant or {})
    fields = tuple(given)
    variants = VARIANTS.get((protocol, fields))
    if variants is None:
        return PROTOCOLS[protocol]
    values = tuple(given[f] for f in fields)
    if values not in variants:
        raise KeyError(f"no display name for {protocol} with {given}")
    return variants[values]


def names(*protocols: str) -> list[str]:
    """Display names of `protocols`, in that order (a figure's series order)."""
    return [name(p) for p in protocols]
