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
