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



def Placement(nodes, cpus, memory_mb, gres, rows=()):
    """The contract's `placement`: per chosen node its CPUs, memory, one GRES count per kind,
    and for a job that shares CPUs (`job.share_rows`) the sharing row of each node."""
    return w.Placement(
        nodes=list(nodes), cpus=list(cpus), memory_mb=list(memory_mb), gres=list(gres), rows=list(rows)
    )


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
        # CPU sharing (OverSubscribe): rows per node, and each row's free CPUs, row-major.
        self.share_rows = table.share_rows
        self.row_free_cpus = list(table.row_free_cpus)

    def __len__(self):
        return len(self.cpus)

    def rows_free(self, n):
        """Free CPUs of node `n`'s sharing rows (empty when no partition shares CPUs)."""
        r = self.share_rows
        return self.row_free_cpus[n * r : (n + 1) * r]

    def row_for(self, n, share_rows, cpus):
        """The row a job that shares CPUs (`job.share_rows` rows) takes for `cpus` CPUs on node
        `n`: the lowest with that many free, as cons_tres fills partition rows; None if none."""
        rows = self.rows_free(n)[: min(share_rows, self.share_rows)]
        return next((r for r, free in enumerate(rows) if free >= cpus), None)

    def free_cpus_for(self, n, share_rows):
        """CPUs of node `n` a job may take: its fullest-free row's when it shares, else those no
        job holds."""
        rows = self.rows_free(n)[: min(share_rows, self.share_rows)]
        return max(rows) if rows else self.free_cpus[n]

    def _move_cpus(self, n, row, cpus, sign):
        """Takes (`sign` -1) or gives back (+1) `cpus` on node `n` in `row`, or every row."""
        r = self.share_rows
        for k in range(r):
            if row is None or k == row:
                at = n * r + k
                self.row_free_cpus[at] = min(max(self.row_free_cpus[at] + sign * cpus, 0), self.cpus[n])
        self.free_cpus[n] = min(self.rows_free(n))

    def gres_free_at(self, n, kind):
        """Free count of GRES kind `kind` on node `n`."""
        return self.gres_free[n * len(self.gres_kinds) + kind]

    def apply_changes(self, packed):
        """Applies the contract's `node-changes`: per node, its index, free CPUs, free memory,
        power, then its free count of each GRES kind. A change that does not fit the table
        means the host broke the contract: raising traps, rather than placing on a stale copy."""
        kinds = len(self.gres_kinds)
        rows = self.share_rows
        width = 4 + kinds + rows
        if len(packed) % width:
            raise ValueError("node changes are cut short")
        for at in range(0, len(packed), width):
            n, cpus, memory, power = packed[at : at + 4]
            if n >= len(self.cpus) or power > 2:
                raise ValueError(f"node change names node {n} with power {power}")
            self.free_cpus[n] = cpus
            self.free_memory_mb[n] = memory
            self.power[n] = power
            self.gres_free[n * kinds : (n + 1) * kinds] = packed[at + 4 : at + 4 + kinds]
            self.row_free_cpus[n * rows : (n + 1) * rows] = packed[at + 4 + kinds : at + width]

    def fits(self, p):
        """Whether placement `p` fits the free columns (nodes ascending, known, nothing over)."""
        kinds = len(self.gres_kinds)
        k = len(p.nodes)
        rows = list(p.rows)
        if len(p.cpus) != k or len(p.memory_mb) != k or len(p.gres) != k * kinds:
            return False
        if rows and len(rows) != k:
            return False
        before = -1
        for i, n in enumerate(p.nodes):
            if n >= len(self.cpus) or n <= before:
                return False
            before = n
            if rows and rows[i] >= self.share_rows:
                return False
            free = self.row_free_cpus[n * self.share_rows + rows[i]] if rows else self.free_cpus[n]
            if p.cpus[i] > free or p.memory_mb[i] > self.free_memory_mb[n]:
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
            if self.share_rows:
                self._move_cpus(n, p.rows[i] if p.rows else None, p.cpus[i], -1)
            else:
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
            if self.share_rows:
                row = p.rows[i] if i < len(p.rows) else None
                self._move_cpus(n, row, _at(p.cpus, i), 1)
            else:
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
        # Sharing rows the job may use (OverSubscribe), 0 when it holds its CPUs alone; a job
        # that shares is placed with `rows`, one per chosen node (`nodes.row_for(n, job.share_rows, cpus)`).
        self.share_rows = request.share_rows
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
