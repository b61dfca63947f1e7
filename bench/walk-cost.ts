// What the walk by descriptors (src/fs/beneath.ts) costs a call: CPU time per read_file and per
// read + edit_file cycle through createHost, in-process. CPU time, not wall time: on a shared machine
// (load 10–30 on 2 cores here) the wall figures of bench/mcp.ts swing by 2× from run to run.
// Usage: node --import tsx bench/walk-cost.ts [--pairs N] [REPO ...]   (default: this checkout; pass a
// second checkout of the commit before, e.g. from `git archive`, to compare; --pairs N measures the
// repos in turn N times in this one process, so a busy moment falls on both, and prints the medians)
import path from "node:path";
import { DEEP_FILE, deepFileHost } from "./deep-file-host.js";
import { REPO } from "./report.js";

const READS = 2000;
const EDITS = 300;

async function measure(repo: string): Promise<Record<string, number | string>> {
  const { host, done } = await deepFileHost(repo, "walk-cost");
  const file = DEEP_FILE;
  try {
    const read = () => host.call("read_file", { path: file, force: true });
    for (let i = 0; i < 200; i++) await read();
    let c0 = process.cpuUsage();
    for (let i = 0; i < READS; i++) await read();
    let c = process.cpuUsage(c0);
    const readUs = (c.user + c.system) / READS;
    c0 = process.cpuUsage();
    let cur = "END";
    for (let i = 0; i < EDITS; i++) {
      await read();
      const r = await host.call("edit_file", { path: file, old_string: cur, new_string: `E${i}` });
      if (r.status !== "ok") throw new Error(JSON.stringify(r));
      cur = `E${i}`;
    }
    c = process.cpuUsage(c0);
    return { repo, read_cpu_us: +readUs.toFixed(1), edit_cycle_cpu_us: +((c.user + c.system) / EDITS).toFixed(1) };
  } finally {
    done();
  }
}

const argv = process.argv.slice(2);
const at = argv.indexOf("--pairs");
const pairs = at === -1 ? 1 : Number(argv.splice(at, 2)[1]);
const repos = (argv.length ? argv : [REPO]).map((r) => path.resolve(r));
const runs = new Map<string, Record<string, number | string>[]>(repos.map((r) => [r, []]));
for (let i = 0; i < pairs; i++)
  for (const repo of repos) {
    const m = await measure(repo);
    runs.get(repo)!.push(m);
    console.log(JSON.stringify(m));
  }
if (pairs > 1) {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [repo, ms] of runs)
    console.log(
      JSON.stringify({
        repo,
        median_of: ms.length,
        read_cpu_us: median(ms.map((m) => m.read_cpu_us as number)),
        edit_cycle_cpu_us: median(ms.map((m) => m.edit_cycle_cpu_us as number)),
      }),
    );
}
