// What a Python virtual environment in the workspace costs every contained call: `sh -c true` through
// `host.call("local_shell")` (auto_edit: a workspace-write run, so the box's walk, the guard's two
// and the tree diff's), in a workspace holding `.venv/lib/python3.12/site-packages` of FOLDERS
// folders (five empty files each) and in one without. Each tree given is imported from its src/ in
// turn in this one process, the calls interleaved, so a busy moment falls on all alike.
// Usage: node --import tsx bench/venv-call.ts [--folders N] [--calls N] [REPO ...]   (default: this
// checkout; pass a checkout of the commit before, e.g. from `git archive`, to compare)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { flagsAndTrees } from "./report.js";

const {
  flags: { folders: FOLDERS, calls: CALLS },
  trees: repos,
} = flagsAndTrees({ folders: 6000, calls: 15 });

const tmp = mkdtempSync(path.join(os.tmpdir(), "latch-bench-venv-"));
function workspace(name: string, folders: number): string {
  const root = path.join(tmp, name);
  mkdirSync(path.join(root, "src"), { recursive: true });
  writeFileSync(path.join(root, "src/main.py"), "print(1)\n");
  const site = path.join(root, ".venv/lib/python3.12/site-packages");
  for (let i = 0; i < folders; i++) {
    const dir = path.join(site, `pkg${i % 200}`, `m${i}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 5; f++) writeFileSync(path.join(dir, `f${f}.py`), "");
  }
  return root;
}

type Host = { call(tool: string, args: unknown): Promise<{ status: string }>; close(): void };
const spaces = {
  [`site-packages, ${FOLDERS} folders`]: workspace("venv", FOLDERS),
  "no virtual environment": workspace("plain", 0),
};
try {
  for (const [label, root] of Object.entries(spaces)) {
    const hosts: Host[] = [];
    for (const [k, r] of repos.entries()) {
      const lib = (await import(path.join(r, "src/index.ts"))) as {
        createHost(o: Record<string, unknown>): Promise<Host>;
        yesApprover: unknown;
      };
      hosts.push(
        await lib.createHost({
          root,
          stateDir: mkdtempSync(path.join(tmp, `state${k}-`)),
          config: { toolsPolicies: {}, agents: {} },
          env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: tmp },
          approver: lib.yesApprover,
          envelope: "auto_edit",
        }),
      );
    }
    const ms = repos.map(() => [] as number[]);
    for (let i = 0; i <= CALLS; i++)
      for (const [k, h] of hosts.entries()) {
        const t = performance.now();
        const out = await h.call("local_shell", { command: "sh", args: ["-c", "true"] });
        if (out.status !== "ok") throw new Error(JSON.stringify(out));
        if (i > 0) ms[k].push(performance.now() - t); // the first: the listings read cold
      }
    for (const h of hosts) h.close();
    for (const [k, r] of repos.entries()) {
      const sorted = ms[k].sort((a, b) => a - b);
      console.log(
        JSON.stringify({ repo: r, workspace: label, calls: CALLS, p50_ms: +sorted[sorted.length >> 1].toFixed(1) }),
      );
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
