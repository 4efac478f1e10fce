"""GRES policies in Python (the `gres-policy` world): device logic for one GRES name.

The host keeps the device state; a policy validates configuration, picks devices inside a node
and writes environment. `export(pick, env, validate)` builds the export from three functions:

* `pick(request) -> list[int]`: `request.count` distinct indices from `request.free`, for one
  node of a job (`request.cores` are the job's cores there, `request.devices` the node's);
* `env(alloc, step) -> dict[str, str]`: the variables of a job (or step) on one node;
* `validate(node) -> str | None`: why a node's configuration is wrong, or None. Optional:
  by default a node is valid when it lists no devices or exactly `count` of them.
"""

import wit_world.exports
from componentize_py_types import Err, Ok


def default_validate(node):
    """A node lists no devices (count-only) or exactly `count` devices, indexed in order."""
    if node.devices and len(node.devices) != node.count:
        return f"{node.node}: Count={node.count} but {len(node.devices)} devices listed"
    for position, device in enumerate(node.devices):
        if device.index != position:
            return f"{node.node}: device {position} has index {device.index}"
    return None


def export(pick, env, validate=default_validate):
    """Builds the `Gres` class componentize-py exports from `pick`, `env` and `validate`."""

    class Gres(wit_world.exports.Gres):
        def validate(self, nodes):
            answers = []
            for node in nodes:
                why = validate(node)
                answers.append(Ok(None) if why is None else Err(why))
            return answers

        def pick(self, requests):
            return [list(pick(r)) for r in requests]

        def env(self, alloc, step):
            return [(k, str(v)) for k, v in env(alloc, step).items()]

    return Gres
