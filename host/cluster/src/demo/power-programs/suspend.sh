#!/bin/sh
# SuspendProgram for sluice's demo site: a virtual node has no power to switch off, so the
# call is only written down. A real one would power the nodes of the hostlist in $1 off (or
# delete the cloud instances); the daemon counts them POWERED_DOWN after SuspendTimeout.
LOG=/dev/null

echo "$(date +%s) suspend $1" >> "$LOG"
exit 0
