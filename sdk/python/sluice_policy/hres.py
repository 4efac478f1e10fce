"""HRES policies in Python (the `hres-policy` world): which nodes a job's hierarchical-resource
demands allow, and what an allocation costs on which layer.

The host sends every resource and layer with current use at each pass; this module keeps them
for the pass and counts the charges it granted into its copy of `used`, so later jobs of the
same pass see them (the contract allows it; the next pass carries the host's truth).
`export(eligible, charge)` builds the export from two functions of the pass:

* `eligible(hres, demands, candidates) -> list[int]`: the candidate node indices the demands
  allow (a subset of `candidates`);
* `charge(hres, demands, nodes) -> list[(layer, amount)]`: what an allocation on `nodes` costs;
  raise `Refused("why")` when it does not fit.

`hres.resources[r]` has `.name`, `.mode` (0, 1, 2 for MODE_1..MODE_3) and `.variables`;
`hres.layers[l]` has `.resource`, `.count` (-1 infinite), `.base`, `.used`, `.nodes` (indices)
and `.parent`; `hres.room(l)` is what layer `l` can still give.
"""

import wit_world
from componentize_py_types import Err
from wit_world.exports import hres as w

from . import bitmap_nodes, nodes_bitmap


class Refused(Exception):
    """An allocation that does not fit; its message is the reason the host records."""


class Layer:
    """One layer of one resource, its nodes as indices."""

    def __init__(self, layer):
        self.resource = layer.resource
        self.count = layer.count
        self.base = layer.base
        self.used = layer.used
        self.nodes = bitmap_nodes(layer.nodes)
        self.node_set = frozenset(self.nodes)
        self.parent = layer.parent


class Resource:
    """One resource: its name, its mode (0, 1, 2 for MODE_1..MODE_3) and named variables."""

    def __init__(self, resource):
        self.name = resource.name
        self.mode = resource.mode.value
        self.variables = dict(resource.variables)


class Pass:
    """The resources and layers of the current pass, with this pass's charges in `used`."""

    def __init__(self, resources, layers):
        self.resources = [Resource(r) for r in resources]
        self.layers = [Layer(x) for x in layers]

    def room(self, layer):
        """What layer `layer` can still give: count − base − used (None when infinite)."""
        x = self.layers[layer]
        return None if x.count < 0 else x.count - x.base - x.used


_pass = None


def export(eligible, charge):
    """Builds the `Hres` class componentize-py exports from `eligible` and `charge`."""

    class Hres(wit_world.exports.Hres):
        def begin_pass(self, resources, layers):
            global _pass
            _pass = Pass(resources, layers)

        def eligible(self, demands, candidates):
            allowed = set(eligible(_pass, demands, bitmap_nodes(candidates)))
            within = [n for n in bitmap_nodes(candidates) if n in allowed]
            return nodes_bitmap(within, len(candidates))

        def charge(self, demands, nodes):
            try:
                charges = [w.LayerCharge(l, a) for l, a in charge(_pass, demands, list(nodes))]
            except Refused as why:
                raise Err(str(why))
            for c in charges:
                _pass.layers[c.layer].used += c.amount
            return charges

    return Hres
