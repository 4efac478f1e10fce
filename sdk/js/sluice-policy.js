// sluice's JavaScript SDK: what a site admin writes a policy with, on top of the bindings
// componentize-js generates for a world of `wit/`. It imports only the `host` interface every
// world has, so one file serves every kind:
//
// * `exportPriority(compute)`: named job columns and the association tree the host sent;
// * `exportSelection(place)`: the guest's copy of the node table, kept as the contract says;
// * `exportGres({ pick, env, validate })`: device picks and environment for one GRES name;
// * `exportHres({ eligible, charge })`: the pass's resources and layers, this pass's charges
//   counted into `used`.
//
// Settings as an object with typed readers and logging are shared. What must last between
// calls is kept here for the component instance's life. See examples/deadline-priority-js and
// `sluice plugin new KIND NAME --lang js`.

import { log, settings as hostSettings } from "sluice:policy/host@0.9.0";

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

/** Logs at error level. */
export function error(message, fields = {}) {
  log("error", message, Object.entries(fields).map(([k, v]) => [k, String(v)]));
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

/** The node indices set in a bitmap of 64-bit words (bit n of word n / 64), ascending. */
export function bitmapNodes(words) {
  const out = [];
  Array.from(words, BigInt).forEach((word, w) => {
    for (let bit = 0; word !== 0n; bit++, word >>= 1n) {
      if (word & 1n) out.push(w * 64 + bit);
    }
  });
  return out;
}

/** A bitmap of `words` 64-bit words with `nodes` set (indices past it are left out). */
export function nodesBitmap(nodes, words) {
  const out = new BigUint64Array(words);
  for (const n of nodes) {
    if (n >= 0 && n < words * 64) out[Math.floor(n / 64)] |= 1n << BigInt(n % 64);
  }
  return out;
}

const POWER = { up: 0, "powering-up": 1, "powered-down": 2 };

/**
 * The guest's copy of the node table, as columns of numbers indexed by node: the last
 * `set-nodes`, brought up to date by each pass's changes, less what `place` allocated, plus
 * what `release` gave back — the rule the host models the copy by (sdk/policy/src/node_copy.rs).
 * `power[n]` is 0 (up), 1 (powering up) or 2 (powered down); GRES are counted per kind,
 * `gresFree[n * gresKinds.length + k]`.
 */
export class Nodes {
  constructor(t) {
    this.cpus = Array.from(t.cpus);
    this.freeCpus = Array.from(t.freeCpus);
    this.memoryMb = Array.from(t.memoryMb, Number);
    this.freeMemoryMb = Array.from(t.freeMemoryMb, Number);
    this.weight = Array.from(t.weight);
    this.power = Array.from(t.power, (p) => POWER[p]);
    this.gresKinds = Array.from(t.gresKinds);
    this.gresTotal = Array.from(t.gresTotal);
    this.gresFree = Array.from(t.gresFree);
    // CPU sharing (OverSubscribe): rows per node, and each row's free CPUs, row-major.
    this.shareRows = t.shareRows;
    this.rowFreeCpus = Array.from(t.rowFreeCpus);
  }

  /** Free CPUs of node `n`'s sharing rows (empty when no partition shares CPUs). */
  rowsFree(n) {
    return this.rowFreeCpus.slice(n * this.shareRows, (n + 1) * this.shareRows);
  }

  /**
   * The row a job that shares CPUs (`job.shareRows` rows) takes for `cpus` CPUs on node `n`:
   * the lowest with that many free, as cons_tres fills partition rows; `undefined` if none.
   */
  rowFor(n, shareRows, cpus) {
    const rows = this.rowsFree(n).slice(0, Math.min(shareRows, this.shareRows));
    const row = rows.findIndex((free) => free >= cpus);
    return row < 0 ? undefined : row;
  }

  /** CPUs of node `n` a job may take: its fullest-free row's when it shares, else those no job holds. */
  freeCpusFor(n, shareRows) {
    const rows = this.rowsFree(n).slice(0, Math.min(shareRows, this.shareRows));
    return rows.length ? Math.max(...rows) : this.freeCpus[n];
  }

  /** Takes (`sign` -1) or gives back (+1) `cpus` on node `n` in `row`, or in every row. */
  moveCpus(n, row, cpus, sign) {
    const r = this.shareRows;
    for (let k = 0; k < r; k++) {
      if (row !== undefined && k !== row) continue;
      const at = n * r + k;
      this.rowFreeCpus[at] = Math.min(Math.max(this.rowFreeCpus[at] + sign * cpus, 0), this.cpus[n]);
    }
    this.freeCpus[n] = Math.min(...this.rowsFree(n));
  }

  get length() {
    return this.cpus.length;
  }

  /** Free count of GRES kind `kind` on node `n`. */
  gresFreeAt(n, kind) {
    return this.gresFree[n * this.gresKinds.length + kind];
  }

  /** Applies the contract's `node-changes`; a change that does not fit the table throws (a trap). */
  applyChanges(packed) {
    const kinds = this.gresKinds.length;
    const words = Array.from(packed, Number);
    const rows = this.shareRows;
    const width = 4 + kinds + rows;
    if (words.length % width) throw new Error("node changes are cut short");
    for (let at = 0; at < words.length; at += width) {
      const [n, cpus, memory, power] = words.slice(at, at + 4);
      if (n >= this.cpus.length || power > 2) throw new Error(`node change names node ${n} with power ${power}`);
      this.freeCpus[n] = cpus;
      this.freeMemoryMb[n] = memory;
      this.power[n] = power;
      for (let g = 0; g < kinds; g++) this.gresFree[n * kinds + g] = words[at + 4 + g];
      for (let r = 0; r < rows; r++) this.rowFreeCpus[n * rows + r] = words[at + 4 + kinds + r];
    }
  }

  /** Whether placement `p` fits the free columns (nodes ascending, known, nothing over). */
  fits(p) {
    const kinds = this.gresKinds.length;
    const k = p.nodes.length;
    const rows = p.rows ?? [];
    if (p.cpus.length !== k || p.memoryMb.length !== k || p.gres.length !== k * kinds) return false;
    if (rows.length && rows.length !== k) return false;
    let before = -1;
    for (let i = 0; i < k; i++) {
      const n = p.nodes[i];
      if (n >= this.cpus.length || n <= before) return false;
      before = n;
      if (rows.length && rows[i] >= this.shareRows) return false;
      const free = rows.length ? this.rowFreeCpus[n * this.shareRows + rows[i]] : this.freeCpus[n];
      if (p.cpus[i] > free || Number(p.memoryMb[i]) > this.freeMemoryMb[n]) return false;
      for (let g = 0; g < kinds; g++) if (p.gres[i * kinds + g] > this.gresFree[n * kinds + g]) return false;
    }
    return true;
  }

  /** Subtracts placement `p` if it fits; otherwise changes nothing, as the host's model does. */
  commit(p) {
    if (!this.fits(p)) return false;
    const kinds = this.gresKinds.length;
    p.nodes.forEach((n, i) => {
      if (this.shareRows) this.moveCpus(n, p.rows?.[i], p.cpus[i], -1);
      else this.freeCpus[n] -= p.cpus[i];
      this.freeMemoryMb[n] -= Number(p.memoryMb[i]);
      for (let g = 0; g < kinds; g++) this.gresFree[n * kinds + g] -= p.gres[i * kinds + g];
    });
    return true;
  }

  /** Gives placement `p` back, never past what a node has. */
  release(p) {
    const kinds = this.gresKinds.length;
    p.nodes.forEach((n, i) => {
      if (n >= this.cpus.length) return;
      if (this.shareRows) this.moveCpus(n, p.rows?.[i], p.cpus[i] ?? 0, 1);
      else this.freeCpus[n] = Math.min(this.freeCpus[n] + (p.cpus[i] ?? 0), this.cpus[n]);
      this.freeMemoryMb[n] = Math.min(this.freeMemoryMb[n] + Number(p.memoryMb[i] ?? 0), this.memoryMb[n]);
      for (let g = 0; g < kinds; g++) {
        const slot = n * kinds + g;
        this.gresFree[slot] = Math.min(this.gresFree[slot] + (p.gres[i * kinds + g] ?? 0), this.gresTotal[slot]);
      }
    });
  }
}

/** What a job needs (the contract's `job-request`) as numbers, its candidates as node indices. */
function jobOf(r) {
  return {
    jobId: r.jobId,
    minNodes: r.minNodes,
    maxNodes: r.maxNodes || r.minNodes,
    tasks: r.tasks,
    cpusPerTask: r.cpusPerTask,
    totalCpus: r.tasks * Math.max(r.cpusPerTask, 1),
    // --ntasks-per-node, 0 for none: then every chosen node must give `cpusPerNode` CPUs and
    // there must be at least `fewestNodes` of them, or the host refuses the placement.
    tasksPerNode: r.tasksPerNode,
    cpusPerNode: r.tasksPerNode * Math.max(r.cpusPerTask, 1),
    fewestNodes: Math.max(r.minNodes, 1, r.tasksPerNode ? Math.ceil(r.tasks / r.tasksPerNode) : 0),
    memoryPerNodeMb: Number(r.memoryPerNodeMb),
    gresPerNode: Array.from(r.gresPerNode, ([k, c]) => [k, c]),
    exclusive: r.exclusive,
    // Sharing rows the job may use (OverSubscribe), 0 when it holds its CPUs alone; a job that
    // shares is placed with `rows`, one per chosen node (`nodes.rowFor(n, job.shareRows, cpus)`).
    shareRows: r.shareRows,
    candidates: bitmapNodes(r.candidates),
  };
}

/** The contract's `placement` from `{ nodes, cpus, memoryMb, gres, rows? }` arrays of numbers. */
function placementOut(p) {
  return {
    nodes: Uint32Array.from(p.nodes),
    cpus: Uint32Array.from(p.cpus),
    memoryMb: BigUint64Array.from(p.memoryMb, (m) => BigInt(m)),
    gres: Uint32Array.from(p.gres),
    rows: Uint32Array.from(p.rows ?? []),
  };
}

/** The guest's node copy, for the instance's life. */
let nodes = null;

/**
 * The `selection` export for `place(nodes, job)`, which reads the copy (without changing it)
 * and returns `{ nodes, cpus, memoryMb, gres }` (nodes ascending; per node its CPUs, memory and
 * one GRES count per kind; `rows`, the sharing row per node, for a job that shares CPUs) or
 * `undefined` when the job does not fit. In allocate mode the
 * helper subtracts the answer from the copy.
 */
export function exportSelection(place) {
  return {
    setNodes(table) {
      nodes = new Nodes(table);
    },
    beginPass(changes) {
      nodes.applyChanges(changes);
    },
    place(request, mode, changes) {
      if (changes !== undefined && changes !== null) nodes.applyChanges(changes);
      const placed = place(nodes, jobOf(request));
      if (placed === undefined || placed === null) return undefined;
      if (mode === "allocate") nodes.commit(placed);
      return placementOut(placed);
    },
    release(_jobId, placement) {
      nodes.release(placement);
    },
  };
}

/** A node lists no devices (count-only) or exactly `count` devices, indexed in order. */
export function defaultGresValidate(node) {
  const count = Number(node.count);
  if (node.devices.length && node.devices.length !== count) {
    return `${node.node}: Count=${count} but ${node.devices.length} devices listed`;
  }
  const wrong = node.devices.findIndex((d, position) => d.index !== position);
  return wrong >= 0 ? `${node.node}: device ${wrong} has index ${node.devices[wrong].index}` : undefined;
}

/**
 * The `gres` export: `pick(request)` gives `request.count` distinct indices from `request.free`
 * for one node of a job; `env(alloc, step)` the variables of a job (or step) on one node as an
 * object; `validate(node)` why a node's configuration is wrong, or undefined (optional).
 */
export function exportGres({ pick, env, validate = defaultGresValidate }) {
  return {
    validate(configs) {
      return configs.map((c) => {
        const why = validate(c);
        return why === undefined || why === null ? { tag: "ok" } : { tag: "err", val: String(why) };
      });
    },
    pick(requests) {
      return requests.map((r) => Uint32Array.from(pick(r)));
    },
    env(alloc, step) {
      return Object.entries(env(alloc, step)).map(([k, v]) => [k, String(v)]);
    },
  };
}

const MODES = { mode1: 0, mode2: 1, mode3: 2 };

/** The resources and layers of the current HRES pass, with this pass's charges in `used`. */
export class HresPass {
  constructor(resources, layers) {
    this.resources = resources.map((r) => ({
      name: r.name,
      mode: MODES[r.mode],
      variables: Object.fromEntries(Array.from(r.variables, ([k, v]) => [k, Number(v)])),
    }));
    this.layers = layers.map((l) => {
      const nodes = bitmapNodes(l.nodes);
      return {
        resource: l.resource,
        count: Number(l.count),
        base: Number(l.base),
        used: Number(l.used),
        nodes,
        nodeSet: new Set(nodes),
        parent: l.parent,
      };
    });
  }

  /** What layer `layer` can still give: count − base − used (undefined when infinite). */
  room(layer) {
    const l = this.layers[layer];
    return l.count < 0 ? undefined : l.count - l.base - l.used;
  }
}

/** The HRES pass, for the instance's life. */
let hresPass = null;

/**
 * The `hres` export: `eligible(pass, demands, candidates)` gives the candidate node indices the
 * demands allow; `charge(pass, demands, nodes)` gives `[layer, amount]` pairs, or throws an
 * Error whose message says why the allocation does not fit. Demands are `{ resource, count }`.
 */
export function exportHres({ eligible, charge }) {
  const demandsOf = (ds) => ds.map((d) => ({ resource: d.resource, count: Number(d.count) }));
  return {
    beginPass(resources, layers) {
      hresPass = new HresPass(resources, layers);
    },
    eligible(demands, candidates) {
      const allowed = new Set(eligible(hresPass, demandsOf(demands), bitmapNodes(candidates)));
      return nodesBitmap(bitmapNodes(candidates).filter((n) => allowed.has(n)), candidates.length);
    },
    charge(demands, nodes) {
      let charges;
      try {
        charges = charge(hresPass, demandsOf(demands), Array.from(nodes));
      } catch (e) {
        // componentize-js returns a thrown value with a `payload` as the `err` case; a bare
        // Error would trap.
        throw { payload: e instanceof Error ? e.message : String(e) };
      }
      for (const [layer, amount] of charges) hresPass.layers[layer].used += amount;
      return charges.map(([layer, amount]) => ({ layer, amount: BigInt(amount) }));
    },
  };
}
