// A fixture for the real sandbox: a git workspace, a home with credential stores, a state dir and an
// "outside" folder, all under /var/tmp (not /tmp, which the sandbox replaces with a private one, so
// the masks are what hides them), and the checks every attack test makes afterwards: the disk, the
// process table (nothing carrying a run mark of this process), the policy log.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after } from "node:test";
import { yesApprover } from "../../src/approval/approver.js";
import type { Host, HostOptions } from "../../src/host/create-host.js";
import { probeContainment } from "../../src/sandbox/probe.js";
import { findBwrap } from "../../src/sandbox/probe-run.js";
import { makeFixture } from "../helpers/fixture.js";
import { livingProcesses, markedBy } from "../helpers/procs.js";

export const SYSTEM_PATH = (process.env.PATH ?? "/usr/bin:/bin").split(":").filter((d) => path.isAbsolute(d));

/** Fails loudly (naming the package) where the sandbox cannot run: these tests never skip. */
export async function requireSandbox(): Promise<void> {
  if (!findBwrap(SYSTEM_PATH))
    assert.fail("bubblewrap is not installed: `apt-get install bubblewrap` (.ci/run does it) to run test/sandbox");
  const probe = await probeContainment(SYSTEM_PATH);
  if (!probe.available) assert.fail(`bubblewrap does not work here: ${probe.reason}. ${probe.fix}`);
}

export interface SandboxFixture {
  base: string;
  root: string;
  home: string;
  state: string;
  outside: string;
  git(...args: string[]): string;
  write(rel: string, content: string, mode?: number): string;
  host(opts?: Partial<HostOptions>): Promise<Host>;
  cleanup(): void;
}

export const SECRETS = { ssh: "SECRET-SSH-KEY-i12", aws: "SECRET-AWS-i12", env: "SECRET-ENV-TOKEN-i12" };

export function makeSandboxFixture(prefix = "latch-sbx-"): SandboxFixture {
  const fx = makeFixture(prefix, "/var/tmp");
  const { base, root, state } = fx;
  const home = path.join(base, "home");
  const outside = path.join(base, "outside");
  for (const d of [home, state, outside, path.join(home, ".ssh"), path.join(home, ".aws")]) mkdirSync(d);
  writeFileSync(path.join(home, ".ssh/id_rsa"), SECRETS.ssh);
  writeFileSync(path.join(home, ".aws/credentials"), SECRETS.aws);
  const gitEnv = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" };
  return {
    base,
    root,
    home,
    state,
    outside,
    git: (...args) => execFileSync("git", args, { cwd: root, env: gitEnv, encoding: "utf8" }),
    write(rel, content, mode = 0o644) {
      const abs = path.join(root, rel);
      mkdirSync(path.dirname(abs), { recursive: true });
      writeFileSync(abs, content, { mode });
      return abs;
    },
    host: (opts = {}) => fx.host({ env: { PATH: SYSTEM_PATH.join(":"), HOME: home }, approver: yesApprover, ...opts }),
    cleanup: () => fx.cleanup(),
  };
}

/** A maker of fixtures, each a repository (initRepo), all removed after the file's tests. */
export function repoFixtures(): (prefix: string) => SandboxFixture {
  const made: SandboxFixture[] = [];
  after(() => made.forEach((f) => f.cleanup()));
  return (prefix) => {
    const fx = makeSandboxFixture(prefix);
    made.push(fx);
    initRepo(fx);
    return fx;
  };
}

/** A git repository with one commit of a.txt, with hooks and config exactly as `git init` left them. */
export function initRepo(fx: SandboxFixture): void {
  fx.write("a.txt", "original\n");
  fx.git("init", "-q");
  fx.git("config", "user.email", "t@example.com");
  fx.git("config", "user.name", "t");
  fx.git("add", "a.txt");
  fx.git("commit", "-q", "-m", "one");
}

/** Living processes that carry a run mark of this process (any run of any host in this test). */
export function markedProcesses(): number[] {
  return markedBy().map((p) => p.pid);
}

/** Living processes whose command line contains `needle`. */
export function processesWith(needle: string): number[] {
  return livingProcesses()
    .filter((p) => p.pid !== process.pid && p.argv.join("\0").includes(needle))
    .map((p) => p.pid);
}

/** The effect_decision records of a host's policy log, in order. */
export function decisions(host: Host): Record<string, unknown>[] {
  if (!existsSync(host.policyLog)) return [];
  return readFileSync(host.policyLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_decision");
}

/** One change the control guard undid, as a result and the policy log list it. */
export type Undone = { path: string; what: string };

/**
 * `node -e js` through local_shell (auto_edit runs it contained, workspace-write, with no question):
 * it must run, contained, to exit 0, and the policy log's outcome must list what the result says the
 * guard undid. Returns the result's list.
 */
export async function undoneAfterNode(host: Host, js: string): Promise<Undone[]> {
  const out = (await host.call("local_shell", { command: "node", args: ["-e", js] })) as {
    status: string;
    result?: { contained: boolean; exit_code: number; undone?: Undone[] };
  };
  assert.equal(out.status, "ok", JSON.stringify(out));
  assert.equal(out.result!.contained, true, JSON.stringify(out.result));
  assert.equal(out.result!.exit_code, 0, JSON.stringify(out.result));
  const undone = out.result!.undone ?? [];
  const outcome = readFileSync(host.policyLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_outcome")
    .at(-1);
  assert.deepEqual(outcome?.undone ?? [], undone, "the policy log says what the result says was undone");
  return undone;
}
