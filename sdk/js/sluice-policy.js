// sluice's JavaScript SDK: what a site admin writes a priority policy with, on top of the
// bindings jco generates for the `priority-policy` world of `wit/`.
//
// It gives a policy the same conveniences as the Rust SDK: named job columns, settings as an
// object with typed readers, logging, and the association tree the host sent, kept for the
// component instance's life. A policy is a function `compute(ctx, jobs)` returning one
// priority per job (or `{ priorities, factors }`), exported with `exportPriority(compute)`;
// see examples/deadline-priority-js.

import { log, settings as hostSettings } from "sluice:policy/host@0.7.0";

// Column order of the contract's job table (sdk/policy/src/job_columns.rs).
const U32_COLUMNS = ["jobId", "association", "partition", "qos", "nodes", "cpus", "gpus", "timeLimit"];
const S64_COLUMNS = ["submitTime", "eligibleTime", "memoryMb", "nice", "siteFactor"];

/** The pending jobs as named columns: `jobs.nodes[i]` is job i's node count (numbers). */
export function jobColumns(table) {
  const n = table.rows;
  if (table.u32Columns.length !== n * U32_COLUMNS.length || table.s64Columns.length !== n * S64_COLUMNS.length) {
    throw new Error("job table columns do not match its row count");
  }
  const jobs = { rows: n };
  U32_COLUMNS.forEach((name, k) => {
    jobs[name] = Array.from(table.u32Columns.subarray(k * n, (k + 1) * n));
  });
  S64_COLUMNS.forEach((name, k) => {
    jobs[name] = Array.from(table.s64Columns.subarray(k * n, (k + 1) * n), Number);
  });
  return jobs;
}

/** The plugin's settings (`key = value`, nested tables as dotted keys), with typed readers. */
export function settings() {
  const all = {};
  for (const s of hostSettings()) {
    all[s.key] = s.value.tag === "integer" ? Number(s.value.val) : s.value.val;
  }
  return {
    all,
    number(key, fallback) {
      const v = key in all ? all[key] : fallback;
      if (typeof v !== "number") {
        warn(`${key} must be a number, got ${JSON.stringify(v)}; using ${fallback}`);
        return fallback;
      }
      return v;
    },
    text(key) {
      return typeof all[key] === "string" ? all[key] : undefined;
    },
    integer(key) {
      const s = hostSettings().find((x) => x.key === key);
      return s && s.value.tag === "integer" ? Number(s.value.val) : undefined;
    },
  };
}

/** Logs at info level, tagged with the plugin by the host. */
export function info(message, fields = {}) {
  log("info", message, Object.entries(fields).map(([k, v]) => [k, String(v)]));
}

/** Logs at warn level. */
export function warn(message, fields = {}) {
  log("warn", message, Object.entries(fields).map(([k, v]) => [k, String(v)]));
}

/** The association tree of the last set-cluster plus appended associations. */
let cluster = null;

/** Whether association `index` is called `name` (an account, with `accountsOnly`) or lies below it. */
export function isBelow(associations, index, name, accountsOnly = false) {
  for (let seen = 0; index !== undefined && index < associations.length && seen <= associations.length; seen++) {
    const a = associations[index];
    if (a.name === name && !(accountsOnly && a.isUser)) return true;
    index = a.parent;
  }
  return false;
}

/** The `priority` export for a `compute(ctx, jobs)` function. */
export function exportPriority(compute, shares) {
  return {
    setCluster(c) {
      cluster = c;
    },
    addAssociations(list) {
      cluster.associations.push(...list);
    },
    compute(now, usage, table, explain) {
      const ctx = { now: Number(now), cluster, usage, associations: cluster.associations };
      const answer = compute(ctx, jobColumns(table));
      const priorities = Array.isArray(answer) ? answer : answer.priorities;
      const factors = Array.isArray(answer) ? {} : answer.factors || {};
      return {
        priority: Uint32Array.from(priorities, (p) => Math.min(Math.max(Math.trunc(p), 0), 4294967295)),
        factors: explain ? Object.entries(factors).map(([name, values]) => ({ name, values: Float64Array.from(values) })) : [],
      };
    },
    shares(now, usage) {
      return shares ? shares({ now: Number(now), cluster, usage, associations: cluster.associations }) : [];
    },
  };
}
