"""Priority policies in Python (the `priority-policy` world): named job columns and the
association tree the host sent, kept at module level for the component instance's life.

A policy is a function `compute(ctx, jobs) -> list[int]` (or `(priorities, factors)`), turned
into the export with `Priority = export(compute)`; see examples/deadline-priority-python.
"""

from dataclasses import dataclass

import wit_world
from wit_world.exports import priority as w

# Column order of the contract's job table (sdk/policy/src/job_columns.rs).
U32_COLUMNS = ("job_id", "association", "partition", "qos", "nodes", "cpus", "gpus", "time_limit")
S64_COLUMNS = ("submit_time", "eligible_time", "memory_mb", "nice", "site_factor")


class Jobs:
    """The pending jobs as named columns: `jobs.nodes[i]` is job i's node count."""

    def __init__(self, table):
        n = table.rows
        if len(table.u32_columns) != n * len(U32_COLUMNS) or len(table.s64_columns) != n * len(
            S64_COLUMNS
        ):
            raise ValueError("job table columns do not match its row count")
        self.rows = n
        for k, name in enumerate(U32_COLUMNS):
            setattr(self, name, table.u32_columns[k * n : (k + 1) * n])
        for k, name in enumerate(S64_COLUMNS):
            setattr(self, name, table.s64_columns[k * n : (k + 1) * n])

    def __len__(self):
        return self.rows


@dataclass
class Context:
    """What a call sees besides the jobs: the clock, the cluster's static part, the usage."""

    now: int
    cluster: w.Cluster
    usage: list

    @property
    def associations(self):
        """The association tree, in the host's order (`jobs.association` indexes it)."""
        return self.cluster.associations

    def is_below(self, index, name, accounts_only=False):
        """Whether association `index` is the association called `name` (an account, with
        `accounts_only`) or lies below it."""
        seen = 0
        while index is not None and 0 <= index < len(self.associations) and seen <= len(
            self.associations
        ):
            a = self.associations[index]
            if a.name == name and not (accounts_only and a.is_user):
                return True
            index = a.parent
            seen += 1
        return False


# The cluster of the last set-cluster (plus appended associations), kept for the instance's life.
_cluster = None


def export(compute, shares=None):
    """Builds the `Priority` class componentize-py exports from a `compute(ctx, jobs)` function
    returning one priority per job, or (priorities, factors) with factors a dict name → values.
    """

    class Priority(wit_world.exports.Priority):
        def set_cluster(self, cluster):
            global _cluster
            _cluster = cluster

        def add_associations(self, associations):
            _cluster.associations.extend(associations)

        def compute(self, now, usage, jobs, explain):
            answer = compute(Context(now, _cluster, usage), Jobs(jobs))
            priorities, factors = answer if isinstance(answer, tuple) else (answer, {})
            clamp = [min(max(int(p), 0), 0xFFFFFFFF) for p in priorities]
            named = (
                [w.Factor(name, [float(v) for v in values]) for name, values in factors.items()]
                if explain
                else []
            )
            return w.Priorities(clamp, named)

        def shares(self, now, usage):
            if shares is None:
                return []
            return shares(Context(now, _cluster, usage))

    return Priority
