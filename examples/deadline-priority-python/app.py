"""Example site policy in Python: the deadline policy of examples/deadline-priority, favouring
one project's jobs as its deadline approaches. Same settings, same answers as its Rust twin.

Settings: `project` (account name), `deadline` (Unix seconds), `boost` (default 100000),
`window` (seconds, default 7 days), `weight.age`, `weight.size` (default 1000 each),
`max_age` (seconds, default 7 days).
"""

import sluice_policy as sluice
from sluice_policy import priority

DAY = 86_400
KNOWN = {"project", "deadline", "boost", "window", "weight.age", "weight.size", "max_age"}

# Read once per instance: settings do not change while it lives.
_config = None


def config():
    global _config
    if _config is None:
        s = sluice.settings()
        for key in sorted(set(s) - KNOWN):
            sluice.warn(f"unknown setting `{key}` ignored")
        deadline = s.get("deadline", 0)
        if isinstance(deadline, bool) or not isinstance(deadline, int):
            sluice.warn(f"deadline must be Unix seconds, got {deadline!r}; no boost")
            deadline = 0
        _config = {
            "project": s.text("project"),
            "deadline": deadline,
            "boost": float(s.number("boost", 100_000.0)),
            "window": max(int(s.number("window", 7 * DAY)), 0),
            "weight_age": float(s.number("weight.age", 1000.0)),
            "weight_size": float(s.number("weight.size", 1000.0)),
            "max_age": max(int(s.number("max_age", 7 * DAY)), 0),
        }
    return _config


def urgency(c, now):
    """0 before the window, rising to 1 at the deadline, 0 after it."""
    if c["project"] is None or now > c["deadline"]:
        return 0.0
    left = c["deadline"] - now
    if c["window"] == 0:
        return 1.0 if left == 0 else 0.0
    return max(1.0 - left / c["window"], 0.0)


def compute(ctx, jobs):
    c = config()
    nodes = float(max(ctx.cluster.cluster_nodes, 1))
    max_age = float(max(c["max_age"], 1))
    age = [c["weight_age"] * min(max(ctx.now - t, 0) / max_age, 1.0) for t in jobs.eligible_time]
    size = [c["weight_size"] * min(n / nodes, 1.0) for n in jobs.nodes]
    boost = c["boost"] * urgency(c, ctx.now)
    project = c["project"]
    in_project = [
        project is not None and ctx.is_below(i, project, accounts_only=True)
        for i in range(len(ctx.associations))
    ]
    deadline = [boost if in_project[a] else 0.0 for a in jobs.association]
    priority = [min(max(a + s + d, 1.0), 4294967295.0) for a, s, d in zip(age, size, deadline)]
    return priority, {"AGE": age, "JOBSIZE": size, "DEADLINE": deadline}


Priority = priority.export(compute)
