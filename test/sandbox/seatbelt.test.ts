// The macOS containment (src/sandbox/seatbelt.ts), checked here on Linux where sandbox-exec does not
// run: the Seatbelt profile as text (what is readable, what is writable, the network) and the launch
// as argv. Each attack class of the Linux tests has its line in the profile; whether macOS enforces
// it as written is not tested here (docs/shell.md says so).
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { probeSeatbelt, sbplString, SeatbeltContainment, seatbeltProfile } from "../../src/sandbox/seatbelt.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture("latch-seatbelt-");
after(() => fx.cleanup());

/** The rules of one operation, one per line as the profile writes them. */
const rules = (profile: string, op: string) => profile.split("\n").filter((l) => l.startsWith(`(allow ${op}`));

/** Parentheses balance outside string literals. */
function balanced(profile: string): boolean {
  let depth = 0;
  for (const m of profile.matchAll(/"(?:[^"\\]|\\.)*"|[()]/g)) {
    if (m[0] === "(") depth++;
    else if (m[0] === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

const base = {
  root: "/Users/a/project",
  network: false,
  hidden: ["/Users/a/.ssh", "/Users/a/.config/latch", "/Users/a/project/.env"],
  readOnly: ["/Users/a/project/.git/hooks", "/Users/a/project/.git/config"],
  tmp: "/private/var/folders/x/latch-sbx-1",
};

test("read-only: nothing in the workspace is writable; only the run's temp folder and the null devices", () => {
  const p = seatbeltProfile({ ...base, mode: "read-only" });
  assert.ok(balanced(p), p);
  assert.match(p, /^\(version 1\)\n\(deny default\)\n/);
  const writes = rules(p, "file-write*");
  assert.equal(writes.length, 1, p);
  assert.ok(!writes[0].includes(base.root), "the workspace is not writable");
  assert.ok(writes[0].includes(`(subpath "${base.tmp}")`));
  assert.ok(writes[0].includes('(literal "/dev/null")'));
});

test("workspace-write: the workspace is writable except .git's config and hooks and every hidden path", () => {
  const p = seatbeltProfile({ ...base, mode: "workspace-write" });
  assert.ok(balanced(p), p);
  const ws = rules(p, "file-write*").find((l) => l.includes(base.root));
  assert.ok(ws, p);
  assert.ok(ws.startsWith(`(allow file-write* (require-all (subpath "${base.root}") (require-not (require-any `));
  for (const q of [...base.readOnly, ...base.hidden]) assert.ok(ws.includes(`(subpath "${q}")`), `${q} is excepted`);
});

test("the control plane, credential stores and workspace secrets are not readable; the rest is", () => {
  const p = seatbeltProfile({ ...base, mode: "read-only" });
  const reads = rules(p, "file-read*");
  assert.equal(reads.length, 1, p);
  assert.ok(reads[0].startsWith('(allow file-read* (require-all (subpath "/") (require-not (require-any '));
  for (const h of base.hidden) assert.ok(reads[0].includes(`(subpath "${h}")`), `${h} is hidden`);
  // Nothing else grants reads, so no rule can undo the exception.
  assert.equal(p.match(/file-read/g)?.length, 1);
});

test("no network unless allowed", () => {
  const off = seatbeltProfile({ ...base, mode: "read-only" });
  assert.doesNotMatch(off, /network|system-socket/);
  const on = seatbeltProfile({ ...base, mode: "read-only", network: true });
  assert.match(on, /^\(allow network\* system-socket\)$/m);
});

test("a path with quotes or backslashes cannot end its string and add a rule", () => {
  const evil = '/Users/a/x") (allow file-write* (subpath "/") (x "\\';
  assert.equal(sbplString('a"b\\c'), '"a\\"b\\\\c"');
  const p = seatbeltProfile({ ...base, root: evil, mode: "workspace-write" });
  assert.ok(balanced(p), p);
  // Outside its string literals, the profile is the same as for a plain root: no rule was added.
  const shape = (s: string) => s.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  assert.equal(shape(p), shape(seatbeltProfile({ ...base, root: "/plain", mode: "workspace-write" })));
  assert.ok(p.includes(sbplString(evil)));
});

test("launch: sandbox-exec with the profile, the program by absolute path, its own TMPDIR, removed at cleanup", async () => {
  fx.write({ ".env": "SECRET=1\n", ".git/hooks/pre-commit": "#!/bin/sh\n", "a.txt": "a\n" });
  const c = new SeatbeltContainment("/usr/bin/sandbox-exec");
  const home = path.join(fx.base, "home");
  mkdirSync(path.join(home, ".ssh"), { recursive: true });
  const l = c.launch(
    { file: "/usr/bin/git", argv0: "git", args: ["status"], cwd: fx.root, env: { PATH: "/usr/bin", API_TOKEN: "t" } },
    { root: fx.root, mode: "workspace-write", network: false, hidden: [path.join(fx.base, "state")], home },
  );
  assert.equal(l.file, "/usr/bin/sandbox-exec");
  assert.equal(l.args[0], "-p");
  const profile = l.args[1];
  assert.ok(balanced(profile));
  assert.deepEqual(l.args.slice(2), ["/bin/bash", "-c", 'exec -a "$0" "$@"', "git", "/usr/bin/git", "status"]);
  assert.equal(l.cwd, fx.root);
  assert.equal(l.env.API_TOKEN, undefined, "the environment is rebuilt from the allowlist");
  const tmp = String(l.env.TMPDIR);
  assert.ok(existsSync(tmp));
  for (const p of [path.join(fx.root, ".env"), path.join(home, ".ssh"), path.join(fx.base, "state")])
    assert.ok(rules(profile, "file-read*")[0].includes(sbplString(p)), `${p} is hidden`);
  assert.ok(profile.includes(sbplString(path.join(fx.root, ".git/hooks"))));
  await l.cleanup();
  assert.equal(existsSync(tmp), false);
});

test("launch: the envelope's denied paths (always_deny, deny_paths) are hidden like the secrets", async () => {
  fx.write({ "private/p.txt": "hidden\n", "open/o.txt": "shown\n" });
  const l = new SeatbeltContainment("/usr/bin/sandbox-exec").launch(
    { file: "/usr/bin/grep", args: ["-r", "hidden", "."], cwd: fx.root, env: { PATH: "/usr/bin" } },
    { root: fx.root, mode: "read-only", network: false, hidden: [], denied: ["**/private/**"] },
  );
  const reads = rules(l.args[1], "file-read*")[0];
  assert.ok(reads.includes(sbplString(path.join(fx.root, "private"))), "private/ is hidden");
  assert.ok(!reads.includes(sbplString(path.join(fx.root, "open"))), "open/ is not");
  await l.cleanup();
});

test("the probe: no sandbox-exec names the fix; one that applies the profile is used", async () => {
  const none = await probeSeatbelt(path.join(fx.base, "no-such-sandbox-exec"));
  assert.equal(none.available, false);
  assert.match(
    none.available ? "" : `${none.reason} ${none.fix}`,
    /is not here.*\/usr\/bin\/sandbox-exec.*_containment/,
  );
  // A stand-in that checks it was given a profile and a program, then runs the program.
  const fake = path.join(fx.base, "sandbox-exec");
  writeFileSync(fake, '#!/bin/sh\n[ "$1" = -p ] && case "$2" in "(version 1)"*) shift 2; exec "$@";; esac; exit 9\n');
  chmodSync(fake, 0o755);
  const ok = await probeSeatbelt(fake);
  assert.equal(ok.available, true, JSON.stringify(ok));
  assert.equal(ok.available && ok.containment.kind, "seatbelt");
  const broken = path.join(fx.base, "sandbox-exec-broken");
  writeFileSync(broken, "#!/bin/sh\necho 'sandbox_apply: Operation not permitted' >&2; exit 71\n");
  chmodSync(broken, 0o755);
  const no = await probeSeatbelt(broken);
  assert.equal(no.available, false);
  assert.match(no.available ? "" : no.reason, /Operation not permitted/);
});
