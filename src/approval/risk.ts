// What an approval request puts at stake, for the person who answers it: its risks (writes, deletes,
// outside the workspace, network, privilege), so `rm -rf /` does not read like `npm test --help`, and
// the scope an "allow for this session" answer would cover (the same program, options before the
// subcommand, and subcommand; or the same file). Computed from the call's effect (src/policy/effect.ts), never from the raw arguments: whether a command writes or
// reaches the network is what the planner's program tables found (src/shell/programs), the same facts
// the envelope and the sandbox decide on.
import path from "node:path";
import type { Capabilities, Effect, ShellRun } from "../policy/effect.js";
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

export function describeRisk(tool: string, effect: Effect, root: string): RiskView {
  const { axis } = effect;
  if (axis === "shell" && effect.shell) return shellRisk(effect.shell, root);
  const risk: string[] = [];
  if (axis === "files.write") risk.push("writes files");
  if (axis === "web") risk.push("network");
  // An attached tool may do whatever its server can; what the server claims of it (annotations) is not taken.
  if (axis === "attached") risk.push(`runs a tool of the attached server \`${effect.attached?.server ?? "?"}\``);
  const paths = [...effect.reads, ...effect.writes, ...effect.walks];
  if (paths.some((p) => !isInside(root, p.abs))) return { risk: [...risk, "outside the workspace"] };
  const rels = paths.map((p) => p.rel ?? p.abs);
  const keys = rels.length ? rels.map((r) => `${axis}:${r}`) : [`tool:${tool}`];
  const label = rels.length
    ? `${axis === "files.write" ? "writes to" : "reads of"} ${rels.join(", ")}`
    : `${tool} calls`;
  return { risk, scope: { keys, label } };
}

function shellRisk(run: ShellRun, root: string): RiskView {
  const steps = run.steps;
  const cwd = steps[0]?.cwd || root;
  const risk = new Set<string>();
  const keys: string[] = [];
  for (const { argv, capabilities: caps } of run.commands) {
    const prog = path.basename(argv[0] ?? "");
    // A command without the planner's capabilities is taken to do anything; code latch cannot read
    // word by word (inline, a config's command, workspace scripts) may write too.
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
    keys.push(`shell:${grantKey(prog, argv, caps)}`);
  }
  for (const s of steps) if (s.cwd && !isInside(root, s.cwd)) risk.add("outside the workspace");
  const out = [...risk];
  const onceOnly = ["privilege", "outside the workspace", "deletes recursively"];
  if (onceOnly.some((r) => risk.has(r)) || keys.length === 0) return { risk: out };
  const unique = [...new Set(keys)];
  return { risk: out, scope: { keys: unique, label: unique.map((k) => k.slice("shell:".length)).join(", ") } };
}

/**
 * What a session grant for this command covers: the program, the options before its subcommand with
 * their values (`git -c core.pager=x`, `--git-dir`, `-C`, `--exec-path`: they change what runs), and
 * the subcommand. `npm test --help` → `npm test`; `git --no-pager log` → `git --no-pager log`, which
 * never covers `git -c core.pager=evil log`. A command that runs code latch cannot read word by word
 * (`node -e …`, a command in a config key) is keyed by its whole argv: only the same line passes.
 */
function grantKey(prog: string, argv: string[], caps: Capabilities | undefined): string {
  if (caps?.executesCode) return [prog, ...argv.slice(1)].join(" ");
  const key = [prog];
  let i = 1;
  for (; i < argv.length && argv[i].startsWith("-") && argv[i] !== "--"; i++) {
    key.push(argv[i]);
    if (TAKES_VALUE.has(argv[i]) && i + 1 < argv.length) key.push(argv[++i]);
  }
  const sub = argv[i];
  if (sub !== undefined && /^[a-z][a-z0-9:_-]*$/.test(sub)) key.push(sub);
  return key.join(" ");
}

/** Options before a subcommand that take the next word as their value (git's, and `-C` of make and others). */
const TAKES_VALUE = new Set(["-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"]);
