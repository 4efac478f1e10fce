//! select/cons_tres: per-node CPUs, memory and GRES, best fit over consecutive nodes
