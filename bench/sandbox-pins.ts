// What pinning costs a contained call: in a writable box every folder above a git folder, a `.git`
// file or a runs-later entry is a mount point of its own (bwrap.ts, review g27), and bwrap reads its
// mount table once per mount. `touch .bench` through `host.call("local_shell")` (a writable box), this tree against a base
// tree without the pins (a checkout of c0f5bb2 or earlier, given with --base), interleaved in one run.
// Workspaces: a root repository alone, and with N nested repositories three folders deep beside N
// folders holding a `.vscode` two deep (N = 10 and 30).
//   mkdir /var/tmp/latch-base && git archive c0f5bb2 | tar -x -C /var/tmp/latch-base
//   ln -s "$PWD/node_modules" /var/tmp/latch-base/node_modules
//   node --import tsx bench/sandbox-pins.ts --base /var/tmp/latch-base [--calls N] [--no-write]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { yesApprover } from "../src/approval/approver.js";
import { createHost, type Host } from "../src/host/create-host.js";
import { measuredLine, percentile, publish, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const opt = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const CALLS = Number(opt("--calls") ?? 40);
const BASE = opt("--base");
if (!BASE) throw new Error("--base DIR: a checkout of latch from before the pins (see the header)");

const tmp = mkdtempSync(path.join(os.tmpdir(), "latch-bench-pins-"));
const env = { ...process.env, HOME: tmp, GIT_CONFIG_NOSYSTEM: "1" };

/** A root repository with `n` nested repositories (`pkgI/lib/vendor/rI`) and `n` `appI/src/.vscode`. */
function workspace(n: number): string {
  const root = path.join(tmp, `ws${n}`);
  mkdirSync(root);
  execFileSync("git", ["init", "-q"], { cwd: root, env });
  for (let i = 0; i < n; i++) {
    const r = path.join(root, `pkg${i}/lib/vendor/r${i}`);
    mkdirSync(r, { recursive: true });
    execFileSync("git", ["init", "-q"], { cwd: r, env });
    mkdirSync(path.join(root, `app${i}/src/.vscode`), { recursive: true });
    writeFileSync(path.join(root, `app${i}/src/.vscode/settings.json`), "{}\n");
  }
  return root;
}
const trees = Object.fromEntries([0, 10, 30].map((n) => [String(n), workspace(n)]));

type Make = typeof createHost;
const baseCreate = (
  (await import(pathToFileURL(path.join(BASE, "src/host/create-host.ts")).href)) as { createHost: Make }
).createHost;

async function host(make: Make, root: string, name: string): Promise<Host> {
  return make({
    root,
    stateDir: path.join(tmp, `state-${name}`),
    envelope: "auto_edit", // runs `touch` contained, with no question
    approver: yesApprover,
    config: { toolsPolicies: { local_shell: { _containment: "required" } }, agents: {} },
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmp },
  });
}

const load = watchLoad();
const hosts: Record<string, Host> = {};
for (const [n, root] of Object.entries(trees)) {
  hosts[`${n}|base`] = await host(baseCreate, root, `${n}-base`);
  hosts[`${n}|pins`] = await host(createHost, root, `${n}-pins`);
}
// `touch`, not `echo`: a command the envelope's read-only tier takes runs in a read-only box, where
// nothing is pinned; this one runs in a writable box.
const times: Record<string, number[]> = {};
for (let i = 0; i < CALLS + 5; i++) {
  for (const [key, h] of Object.entries(hosts)) {
    const t = performance.now();
    const out = (await h.call("local_shell", { command: "touch .bench" })) as {
      status: string;
      result?: { contained?: boolean; mode?: string };
    };
    const ms = performance.now() - t;
    if (out.status !== "ok" || out.result?.mode !== "workspace-write")
      throw new Error(`${key}: ${JSON.stringify(out)}`);
    if (i >= 5) (times[key] ??= []).push(ms);
  }
}
load.stop();
for (const h of Object.values(hosts)) h.close();
rmSync(tmp, { recursive: true, force: true });

const f = (x: number) => x.toFixed(1);
const rows = Object.keys(trees).map((n) => {
  const b = times[`${n}|base`];
  const p = times[`${n}|pins`];
  return `| ${n} | ${f(percentile(b, 50))} | ${f(percentile(p, 50))} | ${(percentile(p, 50) / percentile(b, 50)).toFixed(2)} | ${f(percentile(b, 90))} | ${f(percentile(p, 90))} |`;
});
publish(
  "sandbox-pins",
  "Folders pinned above what runs later: their cost per contained call (bench/sandbox-pins.ts)",
  [
    measuredLine(`node --import tsx bench/sandbox-pins.ts --base <c0f5bb2> --calls ${CALLS}`, load),
    "",
    `Contained \`touch .bench\` through \`host.call("local_shell")\` (a writable box), ${CALLS} calls each, interleaved: c0f5bb2 (base: each git folder bound, its control files read-only) against this tree (also every folder above a git folder, a \`.git\` file or a runs-later entry bound on itself: review g27). N nested repositories at \`pkgI/lib/vendor/rI\` and N \`appI/src/.vscode\`: 4 + 2 folders pinned for each I. bwrap reads its mount table once per mount, so the cost grows faster than the count.`,
    "",
    "| N | base p50 ms | pins p50 ms | pins ÷ base | base p90 ms | pins p90 ms |",
    "|---|---|---|---|---|---|",
    ...rows,
  ].join("\n"),
);
