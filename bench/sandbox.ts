// The sandbox's cost: `echo hi` and `git status` (on a real repository: this one, copied) run through
// `host.call("local_shell")` contained (bubblewrap) and uncontained (`_containment = "off"`), in one
// run, interleaved so machine load hits both alike. The peer is latch itself without the sandbox; the
// issue's target is ≤ 20 ms added at p50. Both hosts use an envelope that allows the two commands
// without asking, so the figures are the call path plus the process.
//   node --import tsx bench/sandbox.ts [--calls N] [--no-write]
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHost, type Host } from "../src/host/create-host.js";
import { measuredLine, percentile, publish, REPO, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const CALLS = argv.includes("--calls") ? Number(argv[argv.indexOf("--calls") + 1]) : 100;

const base = mkdtempSync(path.join(os.tmpdir(), "latch-bench-sandbox-"));
const root = path.join(base, "repo");
// A real repository: latch's own history and tree, cloned locally (no network).
execFileSync("git", ["clone", "-q", "--no-hardlinks", REPO, root]);
const envelopes = {
  bench: {
    extends: "default",
    shell: {
      grant: "approve" as const,
      prefix_allowlist: ["echo", "git status"],
      uncontained_allowlist: ["echo", "git status"],
    },
  },
};

async function host(containment: string): Promise<Host> {
  return createHost({
    root,
    stateDir: path.join(base, `state-${containment}`),
    envelope: "bench",
    config: { toolsPolicies: { local_shell: { _containment: containment } }, agents: {}, envelopes },
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
  });
}

const load = watchLoad();
const hosts = { contained: await host("required"), uncontained: await host("off") };
const times: Record<string, number[]> = {};
const commands = ["echo hi", "git status"];
for (let i = 0; i < CALLS + 5; i++) {
  for (const command of commands) {
    for (const [name, h] of Object.entries(hosts)) {
      const t = performance.now();
      const out = (await h.call("local_shell", { command })) as { status: string; result?: Record<string, unknown> };
      const ms = performance.now() - t;
      if (out.status !== "ok" || out.result?.exit_code !== 0)
        throw new Error(`${name} ${command}: ${JSON.stringify(out).slice(0, 300)}`);
      if (out.result.contained !== (name === "contained"))
        throw new Error(`${name}: contained is ${String(out.result.contained)}`);
      if (i >= 5) (times[`${command}|${name}`] ??= []).push(ms); // the first rounds warm caches
    }
  }
}
load.stop();
for (const h of Object.values(hosts)) h.close();
rmSync(base, { recursive: true, force: true });

const f = (x: number) => x.toFixed(1);
const rows = commands.map((command) => {
  const c = times[`${command}|contained`];
  const u = times[`${command}|uncontained`];
  const added = percentile(c, 50) - percentile(u, 50);
  return `| \`${command}\` | ${f(percentile(u, 50))} | ${f(percentile(u, 99))} | ${f(percentile(c, 50))} | ${f(percentile(c, 99))} | ${f(added)} |`;
});
publish(
  "sandbox",
  "Contained execution: bubblewrap around every process (bench/sandbox.ts)",
  [
    measuredLine(`node --import tsx bench/sandbox.ts --calls ${CALLS}`, load),
    "",
    `\`host.call("local_shell")\` per call, ${CALLS} calls each, interleaved; uncontained is \`_containment = "off"\`, contained is bwrap (new user/pid/net/ipc/uts namespaces, read-only root, masks, private /tmp, a pids cgroup as root). \`git status\` runs on a clone of this repository. Target: ≤ 20 ms added at p50.`,
    "",
    "| command | uncontained p50 ms | uncontained p99 ms | contained p50 ms | contained p99 ms | added at p50 ms |",
    "|---|---|---|---|---|---|",
    ...rows,
  ].join("\n"),
);
