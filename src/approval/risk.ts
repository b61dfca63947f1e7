// What an approval request puts at stake, for the person who answers it: its risks (writes, deletes,
// outside the workspace, network, privilege), so `rm -rf /` does not read like `npm test --help`, and
// the scope an "allow for this session" answer would cover (the same program and subcommand, or the
// same file). Computed from the plan, never from the raw arguments: whether a command writes or
// reaches the network is what the planner's program tables found (src/shell/programs), the same facts
// the envelope and the sandbox decide on.
import path from "node:path";
import type { Plan, ToolSpec } from "../tools/define.js";
import { isInside } from "../fs/paths.js";

export interface ApprovalScope {
  /** What one session grant covers: every key of a later request must be granted for it to pass unasked. */
  keys: string[];
  /** The same, for the person: "npm test", "writes to src/a.ts". */
  label: string;
}

export interface RiskView {
  risk: string[];
  /** Absent where a session-wide grant is not offered (privilege, outside the workspace, recursive deletes). */
  scope?: ApprovalScope;
}

const PRIVILEGE = new Set(["sudo", "su", "doas", "pkexec", "run0", "chroot", "mount", "umount", "systemctl", "setcap"]);
const DELETE = new Set(["rm", "rmdir", "shred", "unlink"]);

export function describeRisk(tool: ToolSpec, plan: Plan, root: string): RiskView {
  if (tool.axis === "shell" && plan.commands) return shellRisk(plan.commands, plan, root);
  const risk: string[] = [];
  if (tool.axis === "files.write") risk.push("writes files");
  if (tool.axis === "web") risk.push("network");
  const rels = (plan.paths ?? []).map((p) => p.rel);
  if ((plan.paths ?? []).some((p) => !isInside(root, p.abs))) return { risk: [...risk, "outside the workspace"] };
  const keys = rels.length ? rels.map((r) => `${tool.axis}:${r}`) : [`tool:${tool.name}`];
  const label = rels.length
    ? `${tool.axis === "files.write" ? "writes to" : "reads of"} ${rels.join(", ")}`
    : `${tool.name} calls`;
  return { risk, scope: { keys, label } };
}

function shellRisk(commands: string[][], plan: Plan, root: string): RiskView {
  const steps = plan.steps ?? [];
  // For each of `commands`, the planner's capabilities; a command without them is taken to do anything.
  const programs = plan.programs ?? [];
  const cwd = steps[0]?.cwd ?? root;
  const risk = new Set<string>();
  const keys: string[] = [];
  for (const [i, argv] of commands.entries()) {
    const prog = path.basename(argv[0] ?? "");
    const sub = subcommand(argv);
    const caps = programs[i]?.capabilities;
    // Code latch cannot read word by word (inline, a config's command, workspace scripts) may write too.
    if (!caps || caps.writesFiles || caps.executesCode || caps.runsWorkspaceCode) risk.add("may write files");
    if (DELETE.has(prog))
      risk.add(argv.some((a) => /^-[a-zA-Z]*[rR]/.test(a) || a === "--recursive") ? "deletes recursively" : "deletes");
    if (!caps || caps.network) risk.add("network");
    if (PRIVILEGE.has(prog)) risk.add("privilege");
    for (const a of argv.slice(1)) {
      if (!/^(\/|~|\.\.)/.test(a)) continue;
      const abs = a.startsWith("~") ? a : path.resolve(cwd, a);
      if (abs.startsWith("~") || !isInside(root, abs)) risk.add("outside the workspace");
    }
    keys.push(`shell:${sub ? `${prog} ${sub}` : prog}`);
  }
  for (const s of steps) if (s.cwd && !isInside(root, s.cwd)) risk.add("outside the workspace");
  const out = [...risk];
  const onceOnly = ["privilege", "outside the workspace", "deletes recursively"];
  if (onceOnly.some((r) => risk.has(r)) || keys.length === 0) return { risk: out };
  const unique = [...new Set(keys)];
  return { risk: out, scope: { keys: unique, label: unique.map((k) => k.slice("shell:".length)).join(", ") } };
}

/** `npm test --help` → test; `ls -la src` → none: the first argument, when it reads as a subcommand word. */
function subcommand(argv: string[]): string | undefined {
  const first = argv[1];
  return first !== undefined && /^[a-z][a-z0-9:_-]*$/.test(first) ? first : undefined;
}
