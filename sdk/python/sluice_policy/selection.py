"""Selection policies in Python (the `selection-policy` world): the guest's copy of the node
table, kept as the contract says and exactly as the host models it, so a policy only chooses.

The copy is the last `set-nodes`, brought up to date by each pass's changes, less what `place`
allocated, plus what `release` gave back (sdk/policy/src/node_copy.rs is the same rule in
Rust). A policy is a function `place(nodes, job) -> Placement | None` that reads the copy and
does not change it; in allocate mode the helper subtracts the answer when it fits the copy.
See `sluice plugin new selection NAME --lang python`.
"""

import wit_world
from wit_world.exports import selection as w

from . import bitmap_nodes

Placement = w.Placement


class Nodes:
    """The guest's copy of the node table, as columns indexed by node (`nodes.free_cpus[n]`).

    `power[n]` is 0 (up), 1 (powering up) or 2 (powered down); GRES are counted per kind,
    `gres_free[n * len(gres_kinds) + k]` (or `gres_free_at(n, k)`).
    """

    def __init__(self, table):
        self.cpus = list(table.cpus)
        self.free_cpus = list(table.free_cpus)
        self.memory_mb = list(table.memory_mb)
        self.free_memory_mb = list(table.free_memory_mb)
        self.weight = list(table.weight)
        self.power = [p.value for p in table.power]
        self.gres_kinds = list(table.gres_kinds)
        self.gres_total = list(table.gres_total)
        self.gres_free = list(table.gres_free)

    def __len__(self):
        return len(self.cpus)

    def gres_free_at(self, n, kind):
        """Free count of GRES kind `kind` on node `n`."""
        return self.gres_free[n * len(self.gres_kinds) + kind]

    def apply_changes(self, packed):
        """Applies the contract's `node-changes`: per node, its index, free CPUs, free memory,
        power, then its free count of each GRES kind. A change that does not fit the table
        means the host broke the contract: raising traps, rather than placing on a stale copy."""
        kinds = len(self.gres_kinds)
        width = 4 + kinds
        if len(packed) % width:
            raise ValueError("node changes are cut short")
        for at in range(0, len(packed), width):
            n, cpus, memory, power = packed[at : at + 4]
            if n >= len(self.cpus) or power > 2:
                raise ValueError(f"node change names node {n} with power {power}")
            self.free_cpus[n] = cpus
            self.free_memory_mb[n] = memory
            self.power[n] = power
            self.gres_free[n * kinds : (n + 1) * kinds] = packed[at + 4 : at + width]

    def fits(self, p):
        """Whether placement `p` fits the free columns (nodes ascending, known, nothing over)."""
        kinds = len(self.gres_kinds)
        k = len(p.nodes)
        if len(p.cpus) != k or len(p.memory_mb) != k or len(p.gres) != k * kinds:
            return False
        before = -1
        for i, n in enumerate(p.nodes):
            if n >= len(self.cpus) or n <= before:
                return False
            before = n
            if p.cpus[i] > self.free_cpus[n] or p.memory_mb[i] > self.free_memory_mb[n]:
                return False
            for g in range(kinds):
                if p.gres[i * kinds + g] > self.gres_free[n * kinds + g]:
                    return False
        return True

    def commit(self, p):
        """Subtracts placement `p` if it fits; otherwise changes nothing (the host does the same
        to its model of this copy, and then sends the whole table again)."""
        if not self.fits(p):
            return False
        kinds = len(self.gres_kinds)
        for i, n in enumerate(p.nodes):
            self.free_cpus[n] -= p.cpus[i]
            self.free_memory_mb[n] -= p.memory_mb[i]
            for g in range(kinds):
                self.gres_free[n * kinds + g] -= p.gres[i * kinds + g]
        return True

    def release(self, p):
        """Gives placement `p` back, never past what a node has."""
        kinds = len(self.gres_kinds)
        for i, n in enumerate(p.nodes):
            if n >= len(self.cpus):
                continue
            self.free_cpus[n] = min(self.free_cpus[n] + _at(p.cpus, i), self.cpus[n])
            self.free_memory_mb[n] = min(
                self.free_memory_mb[n] + _at(p.memory_mb, i), self.memory_mb[n]
            )
            for g in range(kinds):
                slot = n * kinds + g
                back = _at(p.gres, i * kinds + g)
                self.gres_free[slot] = min(self.gres_free[slot] + back, self.gres_total[slot])


def _at(values, i):
    return values[i] if i < len(values) else 0


class Job:
    """What a job needs (the contract's `job-request`), with its candidates as node indices."""

    def __init__(self, request):
        self.job_id = request.job_id
        self.min_nodes = request.min_nodes
        self.max_nodes = request.max_nodes or request.min_nodes
        self.tasks = request.tasks
        self.cpus_per_task = request.cpus_per_task
        # --ntasks-per-node, 0 for none: then every chosen node must give `cpus_per_node` CPUs
        # and there must be at least `fewest_nodes` of them, or the host refuses the placement.
        self.tasks_per_node = request.tasks_per_node
        self.memory_per_node_mb = request.memory_per_node_mb
        self.gres_per_node = list(request.gres_per_node)
        self.exclusive = request.exclusive
        self.candidates = bitmap_nodes(request.candidates)

    @property
    def total_cpus(self):
        """CPUs the job needs in all: tasks × CPUs per task."""
        return self.tasks * max(self.cpus_per_task, 1)

    @property
    def cpus_per_node(self):
        """CPUs every chosen node must give: tasks per node × CPUs per task (0 without a
        per-node count)."""
        return self.tasks_per_node * max(self.cpus_per_task, 1)

    @property
    def fewest_nodes(self):
        """The fewest nodes a placement may have: min_nodes, and with a per-node count enough
        nodes to hold the tasks at tasks_per_node each."""
        fewest = max(self.min_nodes, 1)
        if self.tasks_per_node:
            fewest = max(fewest, -(-self.tasks // self.tasks_per_node))
        return fewest


# The guest's copy, for the instance's life (componentize-py recreates the export's object).
_nodes = None


def export(place):
    """Builds the `Selection` class componentize-py exports from `place(nodes, job)`, which
    returns a `Placement` (nodes ascending; per node its CPUs, memory, and one GRES count per
    kind) or None when the job does not fit."""

    class Selection(wit_world.exports.Selection):
        def set_nodes(self, table):
            global _nodes
            _nodes = Nodes(table)

        def begin_pass(self, changes):
            _nodes.apply_changes(changes)

        def place(self, request, mode, changes):
            if changes is not None:
                _nodes.apply_changes(changes)
            placed = place(_nodes, Job(request))
            if placed is not None and mode == w.Mode.ALLOCATE:
                _nodes.commit(placed)
            return placed

        def release(self, job_id, placement):
            _nodes.release(placement)

    return Selection
