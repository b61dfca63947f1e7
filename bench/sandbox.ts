// The sandbox's cost: `echo hi` and `git status` (on a real repository: this one, copied) run through
// `host.call("local_shell")` contained (bubblewrap) and uncontained (`_containment = "off"`), in one
// run, interleaved so machine load hits both alike. The peer is latch itself without the sandbox; the
// issue 28 target is ≤ 10 ms added at p50. Both hosts use an envelope that allows the two commands
// without asking, so the figures are the call path plus the process. With --base, a third host runs
// the contained calls from another checkout of latch (a tree before a change), interleaved with these:
//   git worktree add --detach /var/tmp/latch-base <commit>; ln -s "$PWD/node_modules" /var/tmp/latch-base/
//   node --import tsx bench/sandbox.ts [--calls N] [--base /var/tmp/latch-base] [--no-write]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { pathToFileURL } from "node:url";
import os from "node:os";
import path from "node:path";
import { createHost, type Host } from "../src/host/create-host.js";
import { callContainment } from "../src/sandbox/call.js";
import { bwrapArgs, PIDS_LIMIT, pickLauncher } from "../src/sandbox/bwrap.js";
import { launcherArgs } from "../src/sandbox/init.js";
import { makeRunCgroup, pidsCgroupParent, removeRunCgroup } from "../src/sandbox/cgroup.js";
import { BwrapContainment, joinLine } from "../src/sandbox/linux.js";
import { findBwrap, NAMESPACE_ARGS } from "../src/sandbox/probe-run.js";
import { StrictCapture } from "../src/process/capture.js";
import { runBounded } from "../src/process/exec.js";
import { measuredLine, percentile, publish, REPO, watchLoad } from "./report.js";

const argv = process.argv.slice(2);
const CALLS = argv.includes("--calls") ? Number(argv[argv.indexOf("--calls") + 1]) : 100;
const BASE = argv.includes("--base") ? argv[argv.indexOf("--base") + 1] : undefined;

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

type Make = typeof createHost;
async function host(containment: string, make: Make = createHost, name = containment): Promise<Host> {
  return make({
    root,
    stateDir: path.join(base, `state-${name}`),
    envelope: "bench",
    config: { toolsPolicies: { local_shell: { _containment: containment } }, agents: {}, envelopes },
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
  });
}

const load = watchLoad();
const hosts: Record<string, Host> = { contained: await host("required"), uncontained: await host("off") };
if (BASE) {
  const make = (
    (await import(pathToFileURL(path.join(path.resolve(BASE), "src/host/create-host.ts")).href)) as { createHost: Make }
  ).createHost;
  hosts["contained (base)"] = await host("required", make, "base");
}
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
      if (out.result.contained !== name.startsWith("contained"))
        throw new Error(`${name}: contained is ${String(out.result.contained)}`);
      if (i >= 5) (times[`${command}|${name}`] ??= []).push(ms); // the first rounds warm caches
    }
  }
}
for (const h of Object.values(hosts)) h.close();

// Where the added time goes, as root: the same `echo hi` through the process runner alone, bare, in
// bubblewrap, and in bubblewrap joined to a pids cgroup (what a root latch adds; RLIMIT_NPROC binds
// every other user, so a non-root latch runs the second row): one made and removed per run (before
// issue 28) against the pooled ones reused once empty (cgroup.ts).
const bwrap = findBwrap((process.env.PATH ?? "").split(":"))!;
const cgroupParent = pidsCgroupParent();
const runners: [string, BwrapContainment | undefined][] = [
  ["uncontained", undefined],
  ["bubblewrap, no pids cgroup", new BwrapContainment(bwrap, undefined)],
  ...(cgroupParent
    ? [
        ["bubblewrap + pids cgroup made per run (before)", new BwrapContainment(bwrap, cgroupParent, false)] as [
          string,
          BwrapContainment,
        ],
        ["bubblewrap + pooled pids cgroup (root, now)", new BwrapContainment(bwrap, cgroupParent)] as [
          string,
          BwrapContainment,
        ],
      ]
    : []),
];
const parts: Record<string, number[]> = {};
for (let i = 0; i < CALLS + 5; i++) {
  for (const [name, c] of runners) {
    const t = performance.now();
    const o = await runBounded({
      file: "/bin/echo",
      args: ["hi"],
      cwd: root,
      env: { PATH: process.env.PATH },
      deadline: Date.now() + 10_000,
      signal: new AbortController().signal,
      stdout: new StrictCapture(1024),
      stderr: new StrictCapture(1024),
      // The same CallContainment a contained read-only local_shell step gets (src/sandbox/call.ts).
      sandbox: c
        ? callContainment(
            { containment: "required", network: false },
            { available: true, containment: c, detail: name },
            { root, mode: "read-only", hidden: [] },
          )
        : undefined,
    });
    if (o.exitCode !== 0) throw new Error(`${name}: exit ${o.exitCode}`);
    if (i >= 5) (parts[name] ??= []).push(performance.now() - t);
  }
}
// Each step alone, spawned synchronously in this process (no runner, no host): what the box is made of.
const bashL = pickLauncher();
const cmd = { file: "/bin/echo", args: ["hi"], cwd: root, env: { PATH: process.env.PATH } };
const box = { root, mode: "read-only" as const, network: false, hidden: [], asRoot: process.getuid?.() === 0 };
const stepRuns: [string, () => unknown][] = [
  ["`/bin/echo hi`", () => spawnSync("/bin/echo", ["hi"])],
  ...(
    [
      [
        "the launcher before: `bash -c 'ulimit -u'`, then latch's init (perl), then `echo`",
        { ...bashL, setrlimit: undefined },
      ],
      ["the launcher now: latch's init alone (perl sets the rlimit), then `echo`", bashL],
    ] as const
  ).map(([name, l]): [string, () => unknown] => [
    name,
    () => {
      const a = launcherArgs(l, cmd, PIDS_LIMIT);
      return spawnSync(a[0], a.slice(1), { stdio: ["ignore", "pipe", "pipe", "ignore", "ignore", "pipe"] });
    },
  ]),
  ["the mount list (`bwrapArgs`: masks, secrets scan, root-only paths)", () => bwrapArgs(cmd, box, bashL)],
  ["bwrap, namespaces and the whole mount list", () => spawnSync(bwrap, bwrapArgs(cmd, box, bashL))],
  [
    "bwrap, namespaces and 4 mounts only",
    () =>
      spawnSync(bwrap, [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        ...NAMESPACE_ARGS,
        "--unshare-net",
        "--",
        "/bin/echo",
        "hi",
      ]),
  ],
  ...(cgroupParent
    ? ([
        [
          "`sh` joining a kept pids cgroup by `cgroup.procs`, then `echo` (before)",
          () => spawnSync("/bin/sh", ["-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', kept!, "/bin/echo", "hi"]),
        ],
        [
          `\`sh\` joining it as latch does now (\`${joinLine(cgroupParent)}\`), then \`echo\``,
          () => spawnSync("/bin/sh", ["-c", `${joinLine(cgroupParent)} && exec "$@"`, kept!, "/bin/echo", "hi"]),
        ],
        ["`sh` alone, then `echo`", () => spawnSync("/bin/sh", ["-c", 'exec "$@"', "x", "/bin/echo", "hi"])],
      ] as [string, () => unknown][])
    : []),
];
const kept = cgroupParent ? makeRunCgroup(cgroupParent, `${process.pid}-bench`, PIDS_LIMIT) : undefined;
const steps: Record<string, number[]> = {};
for (let i = 0; i < CALLS + 5; i++) {
  for (const [name, run] of stepRuns) {
    const t = performance.now();
    run();
    if (i >= 5) (steps[name] ??= []).push(performance.now() - t);
  }
}
if (kept) await removeRunCgroup(kept);
load.stop();
rmSync(base, { recursive: true, force: true });

const f = (x: number) => x.toFixed(1);
const rows = commands.map((command) => {
  const c = times[`${command}|contained`];
  const u = times[`${command}|uncontained`];
  const b = times[`${command}|contained (base)`];
  const added = percentile(c, 50) - percentile(u, 50);
  const was = b
    ? ` ${f(percentile(b, 50))} | ${f(percentile(b, 99))} | ${f(percentile(b, 50) - percentile(u, 50))} |`
    : "";
  return `| \`${command}\` | ${f(percentile(u, 50))} | ${f(percentile(u, 99))} | ${f(percentile(c, 50))} | ${f(percentile(c, 99))} | ${f(added)} |${was}`;
});
publish(
  "sandbox",
  "Contained execution: bubblewrap around every process (bench/sandbox.ts)",
  [
    measuredLine(`node --import tsx bench/sandbox.ts --calls ${CALLS}${BASE ? " --base <tree before>" : ""}`, load),
    "",
    `\`host.call("local_shell")\` per call, ${CALLS} calls each, interleaved; uncontained is \`_containment = "off"\`, contained is bwrap (new user/pid/net/ipc/uts namespaces, read-only root, masks, private /tmp, a pids cgroup as root). \`git status\` runs on a clone of this repository. Target: ≤ 10 ms added at p50 (issue 28; it was ≤ 20 ms).`,
    "",
    BASE
      ? "| command | uncontained p50 ms | uncontained p99 ms | contained p50 ms | contained p99 ms | added at p50 ms | base contained p50 ms | base contained p99 ms | base added at p50 ms |"
      : "| command | uncontained p50 ms | uncontained p99 ms | contained p50 ms | contained p99 ms | added at p50 ms |",
    BASE ? "|---|---|---|---|---|---|---|---|---|" : "|---|---|---|---|---|---|",
    ...rows,
    "",
    `Where the added time goes: \`echo hi\` through the process runner alone (\`runBounded\`), ${CALLS} runs each, interleaved${cgroupParent ? "" : " (no pids cgroup here: latch is not root, or no writable pids controller)"}. Added at p50 is against the uncontained row.`,
    "",
    "| run | p50 ms | p99 ms | added at p50 ms |",
    "|---|---|---|---|",
    ...runners.map(([name]) => {
      const t = parts[name];
      return `| ${name} | ${f(percentile(t, 50))} | ${f(percentile(t, 99))} | ${f(percentile(t, 50) - percentile(parts.uncontained, 50))} |`;
    }),
    "",
    `Each step alone (\`spawnSync\` in the bench's process, ${CALLS} runs each, interleaved):`,
    "",
    "| step | p50 ms | p99 ms |",
    "|---|---|---|",
    ...stepRuns.map(([name]) => `| ${name} | ${f(percentile(steps[name], 50))} | ${f(percentile(steps[name], 99))} |`),
    "",
    "What issue 28 (point 6) changed, step by step: the root pids cgroup is joined by writing `0` to the cgroup v1 `tasks` file (the kernel moves the calling thread without its global cgroup_threadgroup_rwsem, whose write side waits an RCU grace period; `cgroup.procs` on v2), so joining costs about what `sh` alone does; latch's perl init sets RLIMIT_NPROC by a system call, so no `bash` starts before it. Not changed: the mount list (each mask is a protection the tests check; an empty read-only bind instead of a tmpfs costs the same), and cgroup v2 still joins by `cgroup.procs` (CLONE_INTO_CGROUP or the `favordynmods` mount option would be the way there; this machine's pids controller is on v1).",
  ].join("\n"),
);
