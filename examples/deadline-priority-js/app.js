// Example site policy in JavaScript: the deadline policy of examples/deadline-priority,
// favouring one project's jobs as its deadline approaches. Same settings, same answers as its
// Rust twin.
//
// Settings: `project` (account name), `deadline` (Unix seconds), `boost` (default 100000),
// `window` (seconds, default 7 days), `weight.age`, `weight.size` (default 1000 each),
// `max_age` (seconds, default 7 days).

import { exportPriority, isBelow, settings, warn } from "../../sdk/js/sluice-policy.js";

const DAY = 86400;
const KNOWN = ["project", "deadline", "boost", "window", "weight.age", "weight.size", "max_age"];

// Read once per instance: settings do not change while it lives.
let config = null;

function readConfig() {
  if (config) return config;
  const s = settings();
  for (const key of Object.keys(s.all).sort()) {
    if (!KNOWN.includes(key)) warn(`unknown setting \`${key}\` ignored`);
  }
  let deadline = s.integer("deadline");
  if (deadline === undefined) {
    if ("deadline" in s.all) warn(`deadline must be Unix seconds; no boost`);
    deadline = 0;
  }
  config = {
    project: s.text("project"),
    deadline,
    boost: s.number("boost", 100000),
    window: Math.max(Math.trunc(s.number("window", 7 * DAY)), 0),
    weightAge: s.number("weight.age", 1000),
    weightSize: s.number("weight.size", 1000),
    maxAge: Math.max(Math.trunc(s.number("max_age", 7 * DAY)), 0),
  };
  return config;
}

function urgency(c, now) {
  if (c.project === undefined || now > c.deadline) return 0;
  const left = c.deadline - now;
  if (c.window === 0) return left === 0 ? 1 : 0;
  return Math.max(1 - left / c.window, 0);
}

function compute(ctx, jobs) {
  const c = readConfig();
  const nodes = Math.max(ctx.cluster.clusterNodes, 1);
  const maxAge = Math.max(c.maxAge, 1);
  const age = jobs.eligibleTime.map((t) => c.weightAge * Math.min(Math.max(ctx.now - t, 0) / maxAge, 1));
  const size = jobs.nodes.map((n) => c.weightSize * Math.min(n / nodes, 1));
  const boost = c.boost * urgency(c, ctx.now);
  const inProject = ctx.associations.map((_, i) => c.project !== undefined && isBelow(ctx.associations, i, c.project, true));
  const deadline = jobs.association.map((a) => (inProject[a] ? boost : 0));
  const priorities = age.map((a, i) => Math.min(Math.max(a + size[i] + deadline[i], 1), 4294967295));
  return { priorities, factors: { AGE: age, JOBSIZE: size, DEADLINE: deadline } };
}

export const priority = exportPriority(compute);
