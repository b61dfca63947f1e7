// The tree diff of a contained workspace-write run (src/sandbox/tree-diff.ts: a walk before the run and
// one after) on the workspaces a JavaScript project has: this tree against a base built from before
// node_modules was left out of it (f3c0023 or earlier, given with --base), in turns in one process.
// Workspaces: a pnpm layout (1,500 packages under node_modules/.pnpm, links beside them, ten packages
// with their own node_modules: ~16,000 entries), the same with 4,000 more packages (past the 50,000
// entries the diff walks), a Python virtual environment, and 10,000 source files in 200 folders.
//   mkdir /var/tmp/latch-base && git archive f3c0023 | tar -x -C /var/tmp/latch-base
//   ln -s "$PWD/node_modules" /var/tmp/latch-base/node_modules && (cd /var/tmp/latch-base && node scripts/build.mjs)
//   npm run build && node --import tsx bench/tree-diff.ts --base /var/tmp/latch-base [--no-write]
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measuredLine, percentile, publish, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const BASE = argv.includes("--base") ? argv[argv.indexOf("--base") + 1] : undefined;
if (!BASE)
  throw new Error("--base DIR: a built checkout of latch from before node_modules was left out (see the header)");
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ROUNDS = 7;
const CALLS = 15;

type Report = { changed: unknown[]; count: number; note: string };
type Diff = { start(root: string): { report(): Report } };
type Host = {
  call(tool: string, args: unknown): Promise<{ status: string; result?: { mode?: string } }>;
  close(): void;
};
type CreateHost = (o: Record<string, unknown>) => Promise<Host>;
const load = watchLoad();
const trees: [string, Diff, CreateHost, unknown][] = [];
for (const [name, dir] of [
  ["base", path.resolve(BASE)],
  ["this tree", REPO],
] as const) {
  const m = (await import(pathToFileURL(path.join(dir, "dist/sandbox/tree-diff.js")).href)) as { ShellWrites: Diff };
  const lib = (await import(pathToFileURL(path.join(dir, "dist/index.js")).href)) as {
    createHost: CreateHost;
    yesApprover: unknown;
  };
  trees.push([name, m.ShellWrites, lib.createHost, lib.yesApprover]);
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "latch-bench-tree-diff-"));
const md = (root: string, p: string) => mkdirSync(path.join(root, p), { recursive: true });
function pnpm(name: string, packages: number): string {
  const root = path.join(tmp, name);
  for (let i = 0; i < packages; i++) {
    const p = `node_modules/.pnpm/p${i}@1.0.0/node_modules/p${i}`;
    for (const s of ["lib", "dist", "src/a", "src/b"]) md(root, `${p}/${s}`);
    writeFileSync(path.join(root, p, "package.json"), "{}");
    symlinkSync(`.pnpm/p${i}@1.0.0/node_modules/p${i}`, path.join(root, `node_modules/p${i}`));
  }
  for (const pk of "abcdefghij") {
    md(root, `packages/${pk}/src`);
    md(root, `packages/${pk}/node_modules`);
    writeFileSync(path.join(root, `packages/${pk}/src/index.ts`), "export {};\n");
    for (let j = 0; j < 20; j++)
      symlinkSync(
        `../../../node_modules/.pnpm/p${j}@1.0.0/node_modules/p${j}`,
        path.join(root, `packages/${pk}/node_modules/p${j}`),
      );
  }
  return root;
}
function venv(folders: number, files: number): string {
  const root = path.join(tmp, "venv");
  const site = ".venv/lib/python3.12/site-packages";
  md(root, "src");
  writeFileSync(path.join(root, "src/main.py"), "print(1)\n");
  for (let i = 0; i < folders; i++) md(root, `${site}/pkg${i % 200}/m${i}`);
  for (let i = 0; i < files; i++) writeFileSync(path.join(root, `${site}/pkg${i % 200}/m${i % folders}/f${i}.py`), "");
  return root;
}
function sources(n: number): string {
  const root = path.join(tmp, `src${n}`);
  for (let i = 0; i < n; i++) {
    if (i % 50 === 0) md(root, `src/d${i / 50}`);
    writeFileSync(path.join(root, `src/d${Math.floor(i / 50)}/f${i}.ts`), "export {};\n");
  }
  return root;
}

const rows: string[] = [];
const pnpm1500 = pnpm("pnpm1500", 1500);
const venv6000 = venv(6_000, 30_000);
for (const [label, root] of [
  ["pnpm layout, 1,500 packages (~16,000 entries)", pnpm1500],
  ["pnpm layout, 5,500 packages (past 50,000 entries)", pnpm("pnpm5500", 5500)],
  ["a Python virtual environment: 6,000 folders, 30,000 files in site-packages", venv6000],
  ["10,000 source files in 200 folders, no node_modules", sources(10_000)],
] as const) {
  const ms = trees.map(() => [] as number[]);
  const said = trees.map(() => "");
  for (const [, diff] of trees) diff.start(root).report(); // warm: the same disk cache for both
  for (let r = 0; r < ROUNDS; r++)
    trees.forEach(([, diff], k) => {
      const t = performance.now();
      const rep = diff.start(root).report();
      ms[k].push(performance.now() - t);
      said[k] = /not listed/.test(rep.note) ? "not listed" : `${rep.count} changed`;
    });
  const [before, after] = ms.map((m) => percentile(m, 50));
  rows.push(
    `| ${label} | ${before.toFixed(1)} (${said[0]}) | ${after.toFixed(1)} (${said[1]}) | ${(before / after).toFixed(1)}× |`,
  );
}
// The whole call: a contained `sh -c true` (a workspace-write run, so both walks).
const calls: string[] = [];
for (const [label, root] of [
  ["pnpm layout, 1,500 packages", pnpm1500],
  ["the Python virtual environment above", venv6000],
] as const) {
  const hosts = await Promise.all(
    trees.map(([, , createHost, approver], k) =>
      createHost({
        root,
        stateDir: mkdtempSync(path.join(tmp, `state${k}-`)), // a new one per workspace
        config: { toolsPolicies: {}, agents: {} },
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: tmp },
        approver,
        envelope: "auto_edit",
      }),
    ),
  );
  const ms = trees.map(() => [] as number[]);
  for (let r = 0; r < CALLS + 1; r++)
    for (const [k, h] of hosts.entries()) {
      const t = performance.now();
      const out = await h.call("local_shell", { command: "sh", args: ["-c", "true"] });
      if (out.status !== "ok" || out.result?.mode !== "workspace-write") throw new Error(JSON.stringify(out));
      if (r > 0) ms[k].push(performance.now() - t); // the first: the walks' listings read cold
    }
  for (const h of hosts) h.close();
  const [before, after] = ms.map((m) => percentile(m, 50));
  calls.push(`| ${label} | ${before.toFixed(1)} | ${after.toFixed(1)} | ${(before / after).toFixed(1)}× |`);
}
rmSync(tmp, { recursive: true, force: true });
load.stop();

publish(
  "tree-diff",
  "The tree diff of shell writes: node_modules compared by its own entry (bench/tree-diff.ts)",
  [
    measuredLine("node --import tsx bench/tree-diff.ts --base <f3c0023>", load),
    "",
    `\`ShellWrites.start(root).report()\`: the walk before a contained workspace-write run and the one after it, as every such call makes them, with nothing changed between; median of ${ROUNDS}, the trees in turns in one process, after one warm round each.`,
    "",
    "| workspace | ms per call, before | after | before ÷ after |",
    "|---|---|---|---|",
    ...rows,
    "",
    `A contained \`sh -c true\` through \`host.call("local_shell")\` (auto_edit: a workspace-write run), median of ${CALLS} after one, the two builds' hosts in turns:`,
    "",
    "| workspace | ms per call, before | after | before ÷ after |",
    "|---|---|---|---|",
    ...calls,
    "",
    "Before, every entry under node_modules and site-packages was listed and lstat'ed, twice a call; past 50,000 entries the diff stopped and the result said nothing was listed. Now a folder named node_modules, site-packages or .git is compared by its own lstat (an entry added or removed shows as the folder modified; changes inside it are not listed), and a folder's type comes with its listing (no lstat per folder).",
  ].join("\n"),
);
