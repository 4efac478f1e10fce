#!/bin/sh
# ResumeProgram for sluice's demo site: "boots" each node of the hostlist in $1 by registering
# it BOOT_DELAY seconds later, as a node's agent (slurmd) registers when its machine is up.
# The daemon runs it as its own user with SLUICE_STATE_DIR, a PATH holding `sluice`, and
# SLURM_RESUME_FILE (the jobs the nodes are for, as JSON; gone once this program exits).
# It returns at once, as a ResumeProgram should: a node that never registers is set DOWN at
# ResumeTimeout by the daemon. Install it with mode 0755, owned by root or the daemon's user.
BOOT_DELAY=10
LOG=/dev/null

nodes=$(sluice hostlist expand "$1") || exit 1
echo "$(date +%s) resume $1 $(cat "$SLURM_RESUME_FILE" 2>/dev/null)" >> "$LOG"
for node in $nodes; do
    (sleep "$BOOT_DELAY"; sluice register "$node" NodeHostname="$node") \
        </dev/null >/dev/null 2>&1 &
done
exit 0
