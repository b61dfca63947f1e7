// What masking the workspace's own secrets costs a contained call: `echo hi` through
// `host.call("local_shell")` with bubblewrap, this tree against a base tree without the masks (a
// checkout of an earlier commit, given with --base), interleaved in one run so load hits both alike.
// Two workspaces: a clone of this repository with three `.env` files (masked), and the same with a
// 1,800-folder `vendor/` (a copy of node_modules under a name the walk enters). Also the walk alone
// (scanWorkspace), cold and warm, on both.
//   git worktree add --detach /var/tmp/latch-base 934e9e5~1   (any tree before the masks)
//   ln -s "$PWD/node_modules" /var/tmp/latch-base/node_modules
//   node --import tsx bench/sandbox-secrets.ts --base /var/tmp/latch-base [--calls N] [--no-write]
import { cpSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createHost, type Host } from "../src/host/create-host.js";
import { scanWorkspace } from "../src/sandbox/secrets.js";
import { containedEchoTimes, measuredLine, percentile, publish, REPO, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const opt = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const CALLS = Number(opt("--calls") ?? 60);
const BASE = opt("--base");
if (!BASE) throw new Error("--base DIR: a checkout of latch from before the workspace masks (see the header)");

const tmp = mkdtempSync(path.join(os.tmpdir(), "latch-bench-secrets-"));
const small = path.join(tmp, "repo");
execFileSync("git", ["clone", "-q", "--no-hardlinks", REPO, small]);
for (const rel of [".env", "src/.env.local", "test/fixtures/.env"]) {
  execFileSync("mkdir", ["-p", path.dirname(path.join(small, rel))]);
  writeFileSync(path.join(small, rel), "KEY=bench\n");
}
const large = path.join(tmp, "repo-vendor");
cpSync(small, large, { recursive: true });
cpSync(realpathSync(path.join(REPO, "node_modules")), path.join(large, "vendor"), {
  recursive: true,
  verbatimSymlinks: true,
});
const trees = { repo: small, "repo + vendor/": large };

type Make = typeof createHost;
const baseCreate = (
  (await import(pathToFileURL(path.join(BASE, "src/host/create-host.ts")).href)) as { createHost: Make }
).createHost;

async function host(make: Make, root: string, name: string): Promise<Host> {
  return make({
    root,
    stateDir: path.join(tmp, `state-${name}`),
    envelope: "bench",
    config: {
      toolsPolicies: { local_shell: { _containment: "required" } },
      agents: {},
      envelopes: { bench: { extends: "default", shell: { grant: "approve", prefix_allowlist: ["echo"] } } },
    },
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmp },
  });
}

const walk: string[] = [];
for (const [name, root] of Object.entries(trees)) {
  let t = performance.now();
  const found = scanWorkspace(root);
  const cold = performance.now() - t;
  const warm: number[] = [];
  for (let i = 0; i < 200; i++) {
    t = performance.now();
    scanWorkspace(root);
    warm.push(performance.now() - t);
  }
  walk.push(
    `| ${name} | ${found.secrets.length} | ${cold.toFixed(1)} | ${percentile(warm, 50).toFixed(2)} | ${percentile(warm, 99).toFixed(2)} |`,
  );
}

const load = watchLoad();
const hosts: Record<string, Host> = {};
for (const [name, root] of Object.entries(trees)) {
  hosts[`${name}|base`] = await host(baseCreate, root, `${name}-base`.replace(/\W/g, "_"));
  hosts[`${name}|masks`] = await host(createHost, root, `${name}-masks`.replace(/\W/g, "_"));
}
const times = await containedEchoTimes(hosts, CALLS, 5);
load.stop();
for (const h of Object.values(hosts)) h.close();
rmSync(tmp, { recursive: true, force: true });

const f = (x: number) => x.toFixed(1);
const rows = Object.keys(trees).map((name) => {
  const b = times[`${name}|base`];
  const m = times[`${name}|masks`];
  return `| ${name} | ${f(percentile(b, 50))} | ${f(percentile(m, 50))} | ${f(percentile(m, 50) - percentile(b, 50))} | ${f(percentile(b, 99))} | ${f(percentile(m, 99))} |`;
});
publish(
  "sandbox-secrets",
  "Workspace secret masks: their cost per contained call (bench/sandbox-secrets.ts)",
  [
    measuredLine(`node --import tsx bench/sandbox-secrets.ts --base <tree before the masks> --calls ${CALLS}`, load),
    "",
    `Contained \`echo hi\` through \`host.call("local_shell")\`, ${CALLS} calls each, interleaved: a tree without the masks (base) against this one. \`repo\` is a clone of this repository with three \`.env\` files; \`repo + vendor/\` adds a copy of node_modules (~1,800 folders) under a name the walk enters. Budget: the sandbox's whole cost ≤ 20 ms at p50 (bench/sandbox.ts).`,
    "",
    "| workspace | base p50 ms | masks p50 ms | added at p50 ms | base p99 ms | masks p99 ms |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    "The walk alone (`scanWorkspace`), in this process (the direct figure: on a loaded machine the call-level difference is within the calls' own spread):",
    "",
    "| workspace | secrets found | cold ms | warm p50 ms | warm p99 ms |",
    "|---|---|---|---|---|",
    ...walk,
  ].join("\n"),
);
