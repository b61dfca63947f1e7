// What a box holds by mount (a masked secret, a read-only `.git/config` or `.envrc`) is lost when
// something outside renames a file over it: the kernel detaches the mount in the box (review g20: the
// user's `git config` let a background process append `core.fsmonitor`, and the user's next
// `git status` ran it). Tried for real (bubblewrap, git, the user's rename): the process is stopped,
// the config's program keys are put back, the loss is reported in the result and the policy log, and
// an approved config write does not run beside a live box. Each test checks the disk, the process
// table and the log.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  renameSync,
  rmSync,
  watch,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { bwrapArgs, pickLauncher } from "../../src/sandbox/bwrap.js";
import { ControlGuard } from "../../src/sandbox/guard.js";
import { MountHolds, mountPoints } from "../../src/sandbox/holds.js";
import { waitFor } from "../helpers/wait.js";
import {
  initRepo,
  makeSandboxFixture,
  processesWith,
  requireSandbox,
  SYSTEM_PATH,
  type SandboxFixture,
} from "./sandbox-fixture.js";

type Out = { status: string; reason?: string; result?: Record<string, any> };

let fx: SandboxFixture;
const sh = (host: Host, command: string, extra: Record<string, unknown> = {}) =>
  host.call("local_shell", { command, shell: true, ...extra }) as Promise<Out>;

/** process_output until the process has ended; its undone entries gathered along the way. */
async function untilEnded(host: Host, id: string): Promise<{ undone: { path: string; what: string }[]; out: string }> {
  const undone: { path: string; what: string }[] = [];
  let out = "";
  const ended = await waitFor(async () => {
    const r = (await host.call("process_output", { id })) as Out;
    undone.push(...(r.result?.undone ?? []));
    out += r.result?.stdout?.text ?? "";
    return r.result?.running === false;
  }, 15_000);
  assert.ok(ended, `the background process ${id} still runs: ${out}`);
  return { undone, out };
}

const outcomes = (host: Host) =>
  readFileSync(host.policyLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_outcome");

describe("holds a rename outside takes off", () => {
  before(async () => {
    await requireSandbox();
    fx = makeSandboxFixture("latch-sbx-holds-");
    initRepo(fx);
  });
  after(() => fx?.cleanup());

  test("bwrap's command line: every host path a mount sits on is noted, none of the box's own", () => {
    fx.write(".env", "TOKEN=x\n");
    fx.write(".envrc", "export A=1\n");
    const points = mountPoints(
      bwrapArgs(
        { file: "/bin/true", args: [], cwd: fx.root, env: { PATH: SYSTEM_PATH.join(":") } },
        { root: fx.root, mode: "workspace-write", network: false, hidden: [fx.state], home: fx.home, denied: [] },
        pickLauncher(),
      ),
    );
    for (const p of [".git/config", ".git/hooks", ".env", ".envrc"])
      assert.ok(points.includes(path.join(fx.root, p)), `${p} is held: ${points.join(" ")}`);
    assert.ok(points.includes(path.join(fx.home, ".ssh")), "a credential store is held");
    for (const own of ["/", "/tmp", "/proc", "/dev"]) assert.ok(!points.includes(own), own);
    rmSync(path.join(fx.root, ".env"));
    rmSync(path.join(fx.root, ".envrc"));
  });

  test("attack: the user's `git config` beside a background process looping to append core.fsmonitor", async () => {
    const host = await fx.host();
    const marker = path.join(fx.outside, "fsmonitor-ran");
    fx.write("evil.cfg", `[core]\n\tfsmonitor = touch ${marker}; false\n`);
    const bg = await sh(
      host,
      "while ! cat evil.cfg >> .git/config 2>/dev/null; do sleep 0.005; done; echo appended; exec sleep 30.4101",
      { background: true },
    );
    assert.equal(bg.status, "ok", JSON.stringify(bg));
    assert.ok(await waitFor(async () => processesWith("cat evil.cfg").length > 0), "the loop runs");
    fx.git("config", "user.name", "the-users-name"); // config.lock renamed over .git/config
    const { undone } = await untilEnded(host, String(bg.result!.id));
    const said = JSON.stringify(undone);
    assert.match(said, /"path":".git\/config","what":"NOT held: replaced or removed outside the sandbox/);
    assert.match(said, /stopped the process: its sandbox no longer held this path/);
    assert.deepEqual(processesWith("30.4101"), [], "the process is gone");
    const config = readFileSync(path.join(fx.root, ".git/config"), "utf8");
    assert.doesNotMatch(config, /fsmonitor/, "no program key is left for the user's git");
    assert.match(config, /name = the-users-name/, "the user's own change stays");
    fx.git("status", "--short"); // the user's next git command
    assert.equal(existsSync(marker), false, "the user's git ran nothing of the process's");
    assert.match(JSON.stringify(outcomes(host)), /NOT held: replaced or removed outside the sandbox/, "logged");
    rmSync(path.join(fx.root, "evil.cfg"));
  });

  test("attack: an editor's save of .env (renamed over it) while a background process reads it in a loop", async () => {
    const env = fx.write(".env", "TOKEN=old-one\n");
    const host = await fx.host();
    // The name put together at run time: the shell's own argument check refuses `.env` as a word.
    const reader = "const f = '.' + 'env'; setInterval(() => { try { fs.readFileSync(f) } catch {} }, 20); // 4102";
    const bg = (await host.call("local_shell", { command: "node", args: ["-e", reader], background: true })) as Out;
    assert.equal(bg.status, "ok", JSON.stringify(bg));
    assert.ok(await waitFor(async () => processesWith("// 4102").length > 0), "the loop runs");
    writeFileSync(`${env}.swp`, "TOKEN=the-new-secret-4102\n");
    renameSync(`${env}.swp`, env);
    const { undone } = await untilEnded(host, String(bg.result!.id));
    assert.match(JSON.stringify(undone), /"path":".env","what":"stopped the process/);
    assert.deepEqual(processesWith("// 4102"), [], "the loop is gone");
    assert.equal(readFileSync(env, "utf8"), "TOKEN=the-new-secret-4102\n", "the user's file is left as saved");
    rmSync(env);
  });

  test("a foreground call during which .envrc is replaced outside says so in its result and the log", async () => {
    const envrc = fx.write(".envrc", "export A=1\n");
    const host = await fx.host();
    const call = sh(host, "sleep 1.4103");
    assert.ok(await waitFor(async () => processesWith("1.4103").length > 0), "the call runs");
    writeFileSync(`${envrc}.new`, "export A=2\n");
    renameSync(`${envrc}.new`, envrc);
    const out = await call;
    assert.equal(out.status, "ok", JSON.stringify(out));
    assert.match(JSON.stringify(out.result!.undone), /"path":".envrc","what":"NOT held/);
    assert.match(JSON.stringify(outcomes(host).at(-1)), /NOT held/);
    assert.equal(readFileSync(envrc, "utf8"), "export A=2\n");
    rmSync(envrc);
  });

  test("attack: an approved `git config` beside a live background process is refused, and nothing is written", async () => {
    const host = await fx.host();
    const bg = await sh(host, "exec sleep 30.4104", { background: true });
    assert.equal(bg.status, "ok", JSON.stringify(bg));
    const before = readFileSync(path.join(fx.root, ".git/config"));
    // Not through `sh -c`: a plain command line is what the approval reads as a config write.
    const out = (await host.call("local_shell", { command: "git config user.name while-bg-runs" })) as Out;
    assert.equal(out.status, "refused", JSON.stringify(out));
    assert.match(out.reason!, /holds `\.git\/config` read-only.*Nothing ran/);
    assert.deepEqual(readFileSync(path.join(fx.root, ".git/config")), before, "the config is as it was");
    assert.equal(((await host.call("process_kill", { id: bg.result!.id })) as Out).status, "ok");
    assert.deepEqual(processesWith("30.4104"), []);
    const again = (await host.call("local_shell", { command: "git config user.name after-bg" })) as Out;
    assert.equal(again.status, "ok", JSON.stringify(again));
    assert.match(readFileSync(path.join(fx.root, ".git/config"), "utf8"), /name = after-bg/);
  });

  test("attack: a file tool's approved write of .envrc beside a background process that holds it is refused", async () => {
    const envrc = fx.write(".envrc", "export A=1\n");
    const host = await fx.host();
    assert.equal(((await host.call("read_file", { path: ".envrc" })) as Out).status, "ok");
    const bg = await sh(host, "exec sleep 30.4105", { background: true });
    assert.equal(bg.status, "ok", JSON.stringify(bg));
    const out = (await host.call("write_file", { path: ".envrc", content: "export A=2\n" })) as Out;
    assert.equal(out.status, "refused", JSON.stringify(out));
    assert.match(out.reason!, new RegExp(`\`\\.envrc\` is held by the sandbox of background process ${bg.result!.id}`));
    assert.equal(readFileSync(envrc, "utf8"), "export A=1\n", "nothing was written");
    assert.deepEqual(processesWith("30.4105").length > 0, true, "the process was left running");
    assert.equal(((await host.call("process_kill", { id: bg.result!.id })) as Out).status, "ok");
    const again = (await host.call("write_file", { path: ".envrc", content: "export A=2\n" })) as Out;
    assert.equal(again.status, "ok", JSON.stringify(again));
    assert.equal(readFileSync(envrc, "utf8"), "export A=2\n");
    rmSync(envrc);
  });

  test("attack: a foreground call waits for the user's `git config`, then appends core.fsmonitor: killed at once, put back", async () => {
    const host = await fx.host();
    const marker = path.join(fx.outside, "fg-fsmonitor-ran");
    fx.write("evil.cfg", `[core]\n\tfsmonitor = touch ${marker}; false\n`);
    const call = sh(
      host,
      "for i in $(seq 3000); do cat evil.cfg >> .git/config 2>/dev/null && break; sleep 0.002; done; sleep 20.4106",
    );
    assert.ok(await waitFor(async () => processesWith("20.4106").length > 0 || processesWith("seq 3000").length > 0));
    fx.git("config", "user.name", "the-users-name-2");
    const out = await call;
    assert.equal(out.result!.cancelled, true, "stopped before its own end");
    assert.match(JSON.stringify(out.result!.undone), /"path":".git\/config","what":"NOT held/);
    assert.match(JSON.stringify(out.result!.undone), /stopped the call's processes at once \(SIGKILL\)/);
    assert.deepEqual(processesWith("20.4106"), []);
    const config = readFileSync(path.join(fx.root, ".git/config"), "utf8");
    assert.doesNotMatch(config, /fsmonitor/);
    assert.match(config, /name = the-users-name-2/);
    fx.git("status", "--short");
    assert.equal(existsSync(marker), false);
    rmSync(path.join(fx.root, "evil.cfg"));
  });

  test("attack: a background process that ignores SIGTERM is killed at once, and the config stays clean", async () => {
    const host = await fx.host();
    const marker = path.join(fx.outside, "term-fsmonitor-ran");
    fx.write("evil.cfg", `[core]\n\tfsmonitor = touch ${marker}; false\n`);
    const bg = await sh(
      host,
      "trap '' TERM; while :; do grep -q fsmonitor .git/config || cat evil.cfg >> .git/config 2>/dev/null; sleep 0.003; done # 4107",
      { background: true },
    );
    assert.ok(await waitFor(async () => processesWith("# 4107").length > 0));
    fx.git("config", "user.name", "the-users-name-3");
    assert.ok(
      await waitFor(async () => processesWith("# 4107").length === 0, 1_500),
      "gone well within SIGTERM's grace",
    );
    await untilEnded(host, String(bg.result!.id));
    assert.doesNotMatch(readFileSync(path.join(fx.root, ".git/config"), "utf8"), /fsmonitor/);
    fx.git("status", "--short");
    assert.equal(existsSync(marker), false);
    rmSync(path.join(fx.root, "evil.cfg"));
  });

  test("attack: a nested repository's config replaced by the user's git beside a background process", async () => {
    const sub = path.join(fx.root, "nested");
    execFileSync("git", ["init", "-q", sub]);
    const host = await fx.host();
    const marker = path.join(fx.outside, "nested-fsmonitor-ran");
    fx.write("evil.cfg", `[core]\n\tfsmonitor = touch ${marker}; false\n`);
    const bg = await sh(
      host,
      "while ! cat evil.cfg >> nested/.git/config 2>/dev/null; do sleep 0.002; done; sleep 30.4108",
      {
        background: true,
      },
    );
    assert.ok(await waitFor(async () => processesWith("nested/.git/config").length > 0));
    execFileSync("git", ["-C", sub, "config", "user.name", "nested-user"]);
    const { undone } = await untilEnded(host, String(bg.result!.id));
    assert.match(JSON.stringify(undone), /"path":"nested\/.git\/config","what":"NOT held/);
    const config = readFileSync(path.join(sub, ".git/config"), "utf8");
    assert.doesNotMatch(config, /fsmonitor/);
    assert.match(config, /name = nested-user/);
    execFileSync("git", ["-C", sub, "status", "--short"]);
    assert.equal(existsSync(marker), false);
    rmSync(sub, { recursive: true });
    rmSync(path.join(fx.root, "evil.cfg"));
  });

  test("attack: .git/config a link: the box puts a file of its own in the link's place, and the user's git replaces the target", async () => {
    const real = path.join(fx.root, ".git/config");
    const shared = path.join(fx.root, "shared");
    mkdirSync(shared);
    renameSync(real, path.join(shared, "gitconfig"));
    symlinkSync("../shared/gitconfig", real);
    try {
      const host = await fx.host();
      const marker = path.join(fx.outside, "link-fsmonitor-ran");
      fx.write(
        "evil.cfg",
        readFileSync(path.join(shared, "gitconfig"), "utf8") + `[core]\n\tfsmonitor = touch ${marker}; false\n`,
      );
      const out = await sh(host, "rm -f .git/config && cp evil.cfg .git/config");
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.match(
        JSON.stringify(out.result!.undone),
        /"path":".git\/config","what":"restored: the link that was here/,
      );
      assert.equal(readlinkSync(real), "../shared/gitconfig", "the user's link is back");
      // The mount sits on the link's target: the user's git replaces that file, and the loss is seen there.
      fx.write("evil2.cfg", `[core]\n\tfsmonitor = touch ${marker}; false\n`);
      const bg = await sh(
        host,
        "while ! cat evil2.cfg >> .git/config 2>/dev/null; do sleep 0.002; done; sleep 30.4109",
        {
          background: true,
        },
      );
      assert.ok(await waitFor(async () => processesWith("evil2.cfg").length > 0));
      fx.git("config", "user.name", "through-the-link");
      const { undone } = await untilEnded(host, String(bg.result!.id));
      assert.match(JSON.stringify(undone), /"path":".git\/config","what":"NOT held/);
      assert.doesNotMatch(readFileSync(path.join(shared, "gitconfig"), "utf8"), /fsmonitor/);
      fx.git("status", "--short");
      assert.equal(existsSync(marker), false);
    } finally {
      rmSync(real);
      renameSync(path.join(shared, "gitconfig"), real);
      rmSync(shared, { recursive: true });
      for (const f of ["evil.cfg", "evil2.cfg"]) rmSync(path.join(fx.root, f), { force: true });
    }
  });

  test("attack: a 140 KB key beside core.fsmonitor makes the restore's copy fail: the whole config is put back", () => {
    const root = path.join(fx.base, "big-key");
    mkdirSync(root);
    execFileSync("git", ["init", "-q", root]);
    const config = path.join(root, ".git/config");
    const holds = new MountHolds(root);
    holds.take(["--ro-bind", config, config]); // a box holding it, as bwrap.ts would
    const guard = ControlGuard.start(root, undefined, holds);
    execFileSync("git", ["-C", root, "config", "user.name", "u"]); // the user's git: a new file, the hold gone
    appendFileSync(config, `[core]\n\tfsmonitor = touch x\n[x]\n\ty = ${"A".repeat(140_000)}\n`); // the box's
    const undone = guard.check();
    guard.end();
    assert.match(JSON.stringify(undone), /the other changed keys NOT kept \(.*\): the whole file is as it was/);
    const now = readFileSync(config, "utf8");
    assert.doesNotMatch(now, /fsmonitor/);
    assert.doesNotMatch(now, /AAAA/);
  });

  test("attack: a nested sub/.envrc that is the user's link: its target is read-only in the box, the link put back", async () => {
    fx.write("tools/envrc", "export OK=1\n");
    mkdirSync(path.join(fx.root, "deep"));
    symlinkSync("../tools/envrc", path.join(fx.root, "deep/.envrc"));
    try {
      const host = await fx.host();
      const out = await sh(host, "echo 'touch /tmp/PWNED' >> deep/.envrc; echo rc=$?");
      assert.match(String(out.result!.stdout), /rc=[1-9]/, "written through the link");
      assert.equal(readFileSync(path.join(fx.root, "tools/envrc"), "utf8"), "export OK=1\n");
      const swap = await sh(host, "rm deep/.envrc && echo 'touch /tmp/PWNED' > deep/.envrc");
      assert.match(
        JSON.stringify(swap.result!.undone),
        /"path":"deep\/.envrc","what":"restored: the link that was here/,
      );
      assert.equal(readlinkSync(path.join(fx.root, "deep/.envrc")), "../tools/envrc");
    } finally {
      rmSync(path.join(fx.root, "deep"), { recursive: true });
      rmSync(path.join(fx.root, "tools"), { recursive: true });
    }
  });

  test("a lost hold on a nested repository's config: its program keys put back, the user's own kept", () => {
    const root = path.join(fx.base, "nested-restore");
    const sub = path.join(root, "sub");
    mkdirSync(sub, { recursive: true });
    execFileSync("git", ["init", "-q", root]);
    execFileSync("git", ["init", "-q", sub]);
    const config = path.join(sub, ".git/config");
    const holds = new MountHolds(root);
    holds.take(["--ro-bind", config, config]);
    const guard = ControlGuard.start(root, undefined, holds);
    execFileSync("git", ["-C", sub, "config", "user.name", "nested-user"]); // the user's: the hold gone
    appendFileSync(config, "[core]\n\tfsmonitor = touch x\n[alias]\n\tst = !sh -c id\n"); // the box's, meanwhile
    const undone = guard.check();
    guard.end();
    assert.match(
      JSON.stringify(undone),
      /"path":"sub\/.git\/config","what":"restored: keys that run programs.*alias\.st, core\.fsmonitor/,
    );
    const now = readFileSync(config, "utf8");
    assert.doesNotMatch(now, /fsmonitor|alias/);
    assert.match(now, /name = nested-user/);
  });

  test("attack: the folder on the way to a held link's target swapped for the box's own: the link is removed", async () => {
    const real = path.join(fx.root, ".git/config");
    const shared = path.join(fx.root, "shared2");
    mkdirSync(shared);
    renameSync(real, path.join(shared, "gitconfig"));
    symlinkSync("../shared2/gitconfig", real);
    const marker = path.join(fx.outside, "swap-fsmonitor-ran");
    try {
      const host = await fx.host();
      fx.write("evil.cfg", `[core]\n\tfsmonitor = touch ${marker}; false\n`);
      const out = await sh(host, "mv shared2 shared2.old && mkdir shared2 && cp evil.cfg shared2/gitconfig");
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.match(
        JSON.stringify(out.result!.undone),
        /"path":".git\/config","what":"removed: the link \(to `..\/shared2\/gitconfig`\)/,
      );
      assert.equal(existsSync(real), false, "no link left to lead git to the box's file");
      fx.git("status", "--short");
      assert.equal(existsSync(marker), false);
    } finally {
      rmSync(real, { force: true });
      renameSync(path.join(fx.root, "shared2.old/gitconfig"), real);
      for (const d of ["shared2", "shared2.old"]) rmSync(path.join(fx.root, d), { recursive: true, force: true });
      rmSync(path.join(fx.root, "evil.cfg"), { force: true });
    }
  });

  test("the user's own folder in place of a held link (during a background process) is kept aside, not removed", () => {
    const root = path.join(fx.base, "link-aside");
    mkdirSync(path.join(root, "ide/vscode"), { recursive: true });
    execFileSync("git", ["init", "-q", root]);
    symlinkSync("ide/vscode", path.join(root, ".vscode"));
    const guard = ControlGuard.start(root);
    rmSync(path.join(root, ".vscode"));
    mkdirSync(path.join(root, ".vscode"));
    writeFileSync(path.join(root, ".vscode/settings.json"), '{ "users": "own" }\n');
    const undone = guard.check();
    guard.end();
    const aside = /kept as `(\.vscode\.latch-aside-[0-9a-f]+)`/.exec(JSON.stringify(undone))?.[1];
    assert.ok(aside, JSON.stringify(undone));
    assert.equal(readFileSync(path.join(root, aside, "settings.json"), "utf8"), '{ "users": "own" }\n');
    assert.equal(readlinkSync(path.join(root, ".vscode")), "ide/vscode");
  });

  test("a lost hold on config.worktree: its program keys put back; checked again, nothing is made or moved", async () => {
    const root = path.join(fx.base, "worktree-config");
    mkdirSync(root);
    execFileSync("git", ["init", "-q", root]);
    execFileSync("git", ["-C", root, "config", "extensions.worktreeConfig", "true"]);
    execFileSync("git", ["-C", root, "config", "--worktree", "core.sparseCheckout", "false"]);
    const file = path.join(root, ".git/config.worktree");
    const holds = new MountHolds(root);
    holds.take(["--ro-bind", file, file]);
    const guard = ControlGuard.start(root, undefined, holds);
    try {
      execFileSync("git", ["-C", root, "config", "--worktree", "user.name", "wt-user"]); // the user's: the hold gone
      appendFileSync(file, "[core]\n\tfsmonitor = touch x\n"); // the box's, meanwhile
      assert.match(
        JSON.stringify(guard.check()),
        /"path":".git\/config.worktree","what":"restored: keys that run programs/,
      );
      assert.doesNotMatch(readFileSync(file, "utf8"), /fsmonitor/);
      assert.match(readFileSync(file, "utf8"), /name = wt-user/);
      // A background process's watch checks at each event in .git: a check that made and removed its
      // restore file there each time made an event each time, and the watch checked for ever (review g22).
      const events: string[] = [];
      const w = watch(path.join(root, ".git"), (_e, name) => events.push(String(name)));
      assert.deepEqual(guard.check(), []);
      await new Promise((r) => setTimeout(r, 100));
      w.close();
      assert.deepEqual(events, [], "the second check touched nothing in .git");
    } finally {
      guard.end();
    }
  });

  test("attack: a file tool's write of .envrc while a foreground call's box holds it is refused", async () => {
    const envrc = fx.write(".envrc", "export A=1\n");
    const host = await fx.host();
    assert.equal(((await host.call("read_file", { path: ".envrc" })) as Out).status, "ok");
    const call = sh(host, "sleep 2.4110");
    assert.ok(await waitFor(async () => processesWith("2.4110").length > 0));
    const out = (await host.call("write_file", { path: ".envrc", content: "export A=2\n" })) as Out;
    assert.equal(out.status, "refused", JSON.stringify(out));
    assert.match(out.reason!, /held by the sandbox of a contained call running now/);
    assert.equal(readFileSync(envrc, "utf8"), "export A=1\n");
    assert.equal((await call).status, "ok");
    rmSync(envrc);
  });

  test("a box holding `.envrc -> tools/envrc` holds the link's target: a write there is what would lift it", () => {
    const root = path.join(fx.base, "held-target");
    mkdirSync(path.join(root, "tools"), { recursive: true });
    writeFileSync(path.join(root, "tools/envrc"), "export A=1\n");
    symlinkSync("tools/envrc", path.join(root, ".envrc"));
    const holds = new MountHolds(root);
    const held = holds.take(["--ro-bind", path.join(root, ".envrc"), path.join(root, ".envrc")]);
    assert.equal(holds.holds(path.join(root, ".envrc")), true);
    assert.equal(holds.holds(path.join(root, "tools/envrc")), true, "where the mount sits");
    held.release();
    assert.equal(holds.holds(path.join(root, "tools/envrc")), false, "a box that ended holds nothing");
  });

  test("an approved config write's guard and any other guard of the root never run at once", () => {
    const root = path.join(fx.base, "guards");
    mkdirSync(root);
    execFileSync("git", ["init", "-q", root]);
    const plain = ControlGuard.start(root);
    assert.throws(() => ControlGuard.start(root, ["user.name"]), /holds `\.git\/config` read-only/);
    plain.end();
    const writer = ControlGuard.start(root, ["user.name"]);
    assert.throws(() => ControlGuard.start(root), /writing|write a person approved/);
    writer.end();
    ControlGuard.start(root).end(); // both ended: a plain guard starts again
  });
});
