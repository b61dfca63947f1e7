// What an approval request puts at stake, for the person who answers it: its risks (writes, deletes,
// outside the workspace, network, privilege), so `rm -rf /` does not read like `npm test --help`, and
// the scope an "allow for this session" answer would cover (the same program and subcommand, or the
// same file). Computed from the plan, never from the raw arguments.
import path from "node:path";
import type { Plan, ToolSpec } from "../tools/define.js";
import { READ_ONLY_COMMANDS } from "../policy/builtin-envelopes.js";
import { isInside } from "../workspace/paths.js";

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

const NETWORK = new Set(["curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "ftp", "telnet"]);
const NETWORK_SUB: Record<string, string[]> = {
  git: ["clone", "fetch", "pull", "push", "ls-remote", "submodule"],
  npm: ["install", "i", "ci", "add", "update", "publish", "exec", "view"],
  pnpm: ["install", "i", "add", "update", "publish", "dlx"],
  yarn: ["install", "add", "upgrade", "publish", "dlx"],
  pip: ["install", "download"],
  pip3: ["install", "download"],
  cargo: ["install", "fetch", "update", "publish"],
  go: ["get", "install", "mod"],
  docker: ["pull", "push", "run", "build"],
};
const PRIVILEGE = new Set(["sudo", "su", "doas", "pkexec", "run0", "chroot", "mount", "umount", "systemctl", "setcap"]);
const DELETE = new Set(["rm", "rmdir", "shred", "unlink"]);

export function describeRisk(tool: ToolSpec, plan: Plan, root: string): RiskView {
  if (tool.axis === "shell" && Array.isArray(plan.commands)) return shellRisk(plan, root);
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

function shellRisk(plan: Plan, root: string): RiskView {
  const commands = plan.commands as string[][];
  const steps = (plan.steps as { cwd?: string }[] | undefined) ?? [];
  const cwd = steps[0]?.cwd ?? root;
  const risk = new Set<string>();
  const keys: string[] = [];
  for (const argv of commands) {
    const prog = path.basename(argv[0] ?? "");
    const sub = subcommand(argv);
    const line = [prog, ...argv.slice(1)].join(" ");
    if (!READ_ONLY_COMMANDS.some((c) => line === c || line.startsWith(c + " "))) risk.add("may write files");
    if (DELETE.has(prog))
      risk.add(argv.some((a) => /^-[a-zA-Z]*[rR]/.test(a) || a === "--recursive") ? "deletes recursively" : "deletes");
    if (NETWORK.has(prog) || (sub && NETWORK_SUB[prog]?.includes(sub))) risk.add("network");
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
