// Attacks on the path resolver. Each tries to read or write outside the workspace (or into latch's
// own control plane) and then checks the disk: the secret was not returned, the target not written.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import type { Host } from "../../src/host/create-host.js";
import type { CallResult } from "../../src/host/types.js";
import { canonicalize, deniedSubstring, isInside } from "../../src/fs/paths.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

const SECRET = "TOP-SECRET-OUTSIDE\n";
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function assertRefused(out: CallResult, pattern?: RegExp): void {
  assert.equal(out.status, "refused", `expected a refusal, got ${JSON.stringify(out)}`);
  if (pattern) assert.match((out as { reason: string }).reason, pattern);
  assert.doesNotMatch(JSON.stringify(out), /TOP-SECRET/);
}

describe("containment check (pure)", () => {
  test("compares whole segments, never string prefixes", () => {
    assert.equal(isInside("/x/ws", "/x/ws"), true);
    assert.equal(isInside("/x/ws", "/x/ws/a/b"), true);
    assert.equal(isInside("/x/ws", "/x/ws-evil/a"), false);
    assert.equal(isInside("/x/ws", "/x/wsa"), false);
    assert.equal(isInside("/x/ws", "/x"), false);
    assert.equal(isInside("/x/ws", "/x/ws/../ws-evil"), false);
    assert.equal(isInside("/x/ws", "/x/ws/..foo"), true, "a name that starts with two dots is still inside");
  });
  test("the string fast path for clean paths agrees with path.relative on random paths", () => {
    const segment = fc.constantFrom("", ".", "..", "x", "ws", "ws-evil", "wsa", "..foo", ".a", "a.");
    const abs = fc.array(segment, { maxLength: 5 }).map((parts) => "/" + parts.join("/"));
    fc.assert(
      fc.property(abs, abs, (root, candidate) => {
        const rel = path.relative(root, candidate);
        const reference = rel === "" || (!path.isAbsolute(rel) && rel !== ".." && !rel.startsWith(".." + path.sep));
        assert.equal(isInside(root, candidate), reference, `isInside(${root}, ${candidate})`);
      }),
      { numRuns: 20000 },
    );
  });
  test("denied substrings match the root-relative slash path; a folder matches as rel/", () => {
    assert.equal(deniedSubstring("a/.git/config", [".git/"]), ".git/");
    assert.equal(deniedSubstring(".git", [".git/"], true), ".git/");
    assert.equal(deniedSubstring(".gitignore", [".git/"]), undefined);
    assert.equal(deniedSubstring("src/node_modules/x.js", ["node_modules"]), "node_modules");
  });
});

describe("path attacks", () => {
  let fx: Fixture;
  let host: Host;
  let outside: string;
  before(async () => {
    fx = makeFixture();
    outside = path.join(fx.base, "outside");
    mkdirSync(outside);
    writeFileSync(path.join(outside, "secret.txt"), SECRET);
    // A sibling root that shares the workspace's name as a prefix.
    mkdirSync(path.join(fx.base, "ws-evil"));
    writeFileSync(path.join(fx.base, "ws-evil", "secret.txt"), SECRET);
    fx.write({ "inside.txt": "inside\n" });
    host = await fx.host({
      config: { toolsPolicies: { local_fs: { _denied_path_substrings: "node_modules,.git/,private" } }, agents: {} },
    });
  });
  after(() => fx.cleanup());

  const untouched = () => {
    assert.equal(readFileSync(path.join(outside, "secret.txt"), "utf8"), SECRET);
    assert.equal(existsSync(path.join(outside, "pwned.txt")), false);
    assert.equal(existsSync(path.join(fx.base, "pwned.txt")), false);
  };

  test("`..` out of the root: read and write refused", async () => {
    assertRefused(await host.call("read_file", { path: "../outside/secret.txt" }), /outside the workspace/);
    assertRefused(
      await host.call("write_file", { path: "../outside/pwned.txt", content: "x" }),
      /outside the workspace/,
    );
    assertRefused(await host.call("write_file", { path: "a/../../pwned.txt", content: "x" }));
    untouched();
  });

  test("an absolute path outside the root", async () => {
    assertRefused(await host.call("read_file", { path: path.join(outside, "secret.txt") }), /outside the workspace/);
    assertRefused(await host.call("read_file", { path: "/etc/passwd" }), /outside the workspace/);
    assertRefused(await host.call("write_file", { path: path.join(outside, "pwned.txt"), content: "x" }));
    untouched();
  });

  test("an absolute path inside the root is fine", async () => {
    const out = await host.call("read_file", { path: path.join(fx.root, "inside.txt") });
    assert.equal(out.status, "ok");
  });

  test("a sibling root sharing the prefix (ws vs ws-evil)", async () => {
    assertRefused(await host.call("read_file", { path: "../ws-evil/secret.txt" }));
    assertRefused(await host.call("read_file", { path: fx.root + "-evil/secret.txt" }));
    assertRefused(await host.call("write_file", { path: fx.root + "-evil/pwned.txt", content: "x" }));
    assert.equal(existsSync(path.join(fx.base, "ws-evil", "pwned.txt")), false);
  });

  test("a symlinked file pointing out", async () => {
    symlinkSync(path.join(outside, "secret.txt"), path.join(fx.root, "link-file"));
    assertRefused(await host.call("read_file", { path: "link-file" }), /outside the workspace/);
    assertRefused(await host.call("read_file_range", { path: "link-file" }));
    assertRefused(await host.call("write_file", { path: "link-file", content: "pwned" }));
    assertRefused(await host.call("edit_file", { path: "link-file", old_string: "TOP", new_string: "pwned" }));
    assertRefused(await host.call("sed", { path: "link-file", pattern: "TOP", replacement: "pwned" }));
    untouched();
  });

  test("a symlinked folder pointing out", async () => {
    symlinkSync(outside, path.join(fx.root, "link-dir"));
    assertRefused(await host.call("read_file", { path: "link-dir/secret.txt" }));
    assertRefused(await host.call("write_file", { path: "link-dir/pwned.txt", content: "x" }));
    assertRefused(await host.call("write_file", { path: "link-dir/new/deeper/pwned.txt", content: "x" }));
    untouched();
    assert.equal(existsSync(path.join(outside, "new")), false, "no folder was created outside");
  });

  test("a chain of symlinks that ends outside", async () => {
    symlinkSync(path.join(outside, "secret.txt"), path.join(fx.root, "chain3"));
    symlinkSync("chain3", path.join(fx.root, "chain2"));
    symlinkSync(path.join(fx.root, "chain2"), path.join(fx.root, "chain1"));
    assertRefused(await host.call("read_file", { path: "chain1" }));
    assertRefused(await host.call("write_file", { path: "chain1", content: "x" }));
    untouched();
  });

  test("a symlinked parent of a file that does not exist yet", async () => {
    symlinkSync(outside, path.join(fx.root, "parent-link"));
    assertRefused(
      await host.call("write_file", { path: "parent-link/pwned.txt", content: "x" }),
      /outside the workspace/,
    );
    untouched();
  });

  test("a dangling symlink pointing out: no write lands at its target", async () => {
    symlinkSync(path.join(outside, "pwned.txt"), path.join(fx.root, "dangling"));
    symlinkSync(path.join(outside, "nodir"), path.join(fx.root, "dangling-dir"));
    assertRefused(await host.call("write_file", { path: "dangling", content: "x" }));
    assertRefused(await host.call("write_file", { path: "dangling-dir/pwned.txt", content: "x" }));
    assertRefused(await host.call("read_file", { path: "dangling" }));
    untouched();
    assert.equal(existsSync(path.join(outside, "nodir")), false);
  });

  test("a dangling relative link reached through a link out: the write is refused, not moved inside", async () => {
    // ws/via -> outside/via, which holds hop -> ../made: the OS puts via/hop/pwned.txt in outside/made,
    // and the resolver once joined ../made to ws/via instead, writing ws/made/pwned.txt.
    mkdirSync(path.join(outside, "via"));
    symlinkSync(path.join(outside, "via"), path.join(fx.root, "via"));
    symlinkSync("../made", path.join(outside, "via", "hop"));
    assertRefused(await host.call("write_file", { path: "via/hop/pwned.txt", content: "x" }), /outside the workspace/);
    assertRefused(await host.call("create_directory", { path: "via/hop/deeper" }), /outside the workspace/);
    untouched();
    assert.equal(existsSync(path.join(outside, "made")), false, "no folder was made outside");
    assert.equal(existsSync(path.join(fx.root, "made")), false, "nothing was written in the workspace instead");
  });

  test("a link that `..` on paper takes back to its own name (f -> q/f, q -> sub/.., sub -> a missing folder outside): refused as outside, where the OS leads it", async () => {
    // The OS takes sub/.. after following sub, so f leads to outside/f once outside/later exists; the
    // resolver's hand walk of a missing path once took it on paper, got ws/f back, and took f for a
    // plain name inside the root.
    symlinkSync(path.join(outside, "later"), path.join(fx.root, "sub"));
    symlinkSync("sub/..", path.join(fx.root, "q"));
    symlinkSync("q/f", path.join(fx.root, "f"));
    assert.equal(await canonicalize(path.join(fx.root, "f")), path.join(outside, "f"));
    for (const p of ["f", "./f"]) {
      assertRefused(await host.call("write_file", { path: p, content: "x" }), /outside the workspace/);
      assertRefused(await host.call("read_file", { path: p }), /outside the workspace/);
    }
    mkdirSync(path.join(outside, "later")); // what a background job could make between plan and write
    assertRefused(await host.call("write_file", { path: "f", content: "x" }), /outside the workspace/);
    assert.equal(existsSync(path.join(outside, "f")), false);
    untouched();
  });

  test("a `..` right after a dangling link (D -> m/.., m -> zz, nd -> ../out): the next link is followed from where the OS is, out", async () => {
    // The parent of a dangling link's target was joined with the next name on paper: D/nd/x gave
    // ws/nd/x, inside, where the OS (once zz exists) takes nd from ws, to ../outside.
    symlinkSync("m/..", path.join(fx.root, "D"));
    symlinkSync("zz", path.join(fx.root, "m"));
    symlinkSync("../outside", path.join(fx.root, "nd"));
    assert.equal(await canonicalize(path.join(fx.root, "D/nd/secret.txt")), path.join(outside, "secret.txt"));
    assertRefused(await host.call("read_file", { path: "D/nd/secret.txt" }), /outside the workspace/);
    assertRefused(await host.call("write_file", { path: "D/nd/pwned.txt", content: "x" }), /outside the workspace/);
    untouched();
  });

  test("links whose targets climb back with `..` (L0 -> L1/../L1/../z0, …, 20 deep) end at the link limit, not in exponential time", () => {
    // Counted per nesting, each link's target made the next one be resolved twice: 2^20 walks, ~60 s
    // of a frozen server. Counted per link followed (as the kernel does), the walk ends at 40: ELOOP.
    // In a child process: a walk that never yields would never give the test's own timer a turn.
    const at = path.join(fx.base, "climb");
    mkdirSync(at);
    for (let i = 0; i < 20; i++) symlinkSync(`L${i + 1}/../L${i + 1}/../z${i}`, path.join(at, `L${i}`));
    const paths = JSON.stringify(pathToFileURL(path.join(repo, "dist/fs/paths.js")).href);
    const script = `
      import { canonicalize } from ${paths};
      canonicalize(process.argv[1]).then((p) => console.log("resolved", p), (e) => console.log(e.code));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, path.join(at, "L0", "new.txt")], {
      timeout: 20_000,
      encoding: "utf8",
    });
    assert.equal(r.signal, null, "the walk ended (not killed at 20 s)");
    assert.equal(r.stdout.trim(), "ELOOP", r.stderr);
  });

  test("a link whose target goes on past a file (L -> m/../plain.txt/., m missing) is not a folder, as the kernel says", async () => {
    fx.write({ "plain.txt": "x" });
    symlinkSync("m/../plain.txt/.", path.join(fx.root, "through-file"));
    await assert.rejects(canonicalize(path.join(fx.root, "through-file")), { code: "ENOTDIR" });
  });

  test("a long chain of dangling links above 1,000 missing names is chased once, not once per name", () => {
    // E -> D/L0, L0 -> D/L1, … L13 -> zz (missing), D 300 folders deep: realpath(3) of each missing
    // ancestor chased the whole chain again (~0.05 s a name here, about a minute for this path). 15
    // links, well under the limit of 40: with 39, one run of 28 files side by side on Node 24 got
    // ELOOP (six alone did not; our guess, the kernel counting a lookup's links again when it retries
    // one). In a child process: a walk that never yields would never let a timer run.
    const at = path.join(fx.base, "chained");
    const deep = path.join(at, ...Array<string>(300).fill("a"));
    mkdirSync(deep, { recursive: true });
    for (let i = 0; i < 14; i++) symlinkSync(path.join(deep, i === 13 ? "zz" : `L${i + 1}`), path.join(deep, `L${i}`));
    symlinkSync(path.join(deep, "L0"), path.join(at, "E"));
    const input = path.join(at, "E", ...Array<string>(1000).fill("x"));
    const paths = JSON.stringify(pathToFileURL(path.join(repo, "dist/fs/paths.js")).href);
    const script = `
      import { canonicalize } from ${paths};
      canonicalize(process.argv[1]).then((p) => console.log(p), (e) => console.log(e.code));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, input], {
      timeout: 20_000,
      encoding: "utf8",
    });
    assert.equal(r.signal, null, "resolved (not killed at 20 s)");
    assert.equal(r.stdout.trim(), path.join(deep, "zz", ...Array<string>(1000).fill("x")), r.stderr);
  });

  test("a dangling symlink inside the root is not written through either", async () => {
    symlinkSync("target-not-yet.txt", path.join(fx.root, "inner-dangling"));
    assertRefused(await host.call("write_file", { path: "inner-dangling", content: "x" }), /symbolic link/);
    assert.equal(existsSync(path.join(fx.root, "target-not-yet.txt")), false);
  });

  test("a symlink loop is refused, not followed forever", async () => {
    symlinkSync("loop-b", path.join(fx.root, "loop-a"));
    symlinkSync("loop-a", path.join(fx.root, "loop-b"));
    const out = await host.call("read_file", { path: "loop-a" });
    assertRefused(out, /loop/);
  });

  test("a NUL byte in the path", async () => {
    assertRefused(await host.call("read_file", { path: "inside.txt\0../../outside/secret.txt" }), /NUL/);
    assertRefused(await host.call("write_file", { path: "pwned\0.txt", content: "x" }), /NUL/);
    untouched();
  });

  test("`_denied_path_substrings`: refused directly, through `..`, and through a symlink", async () => {
    fx.write({
      "node_modules/pkg/index.js": "module.exports = 1;\n",
      "src/private/key.txt": "k\n",
      ".git/config": "[core]\n",
    });
    assertRefused(
      await host.call("read_file", { path: "node_modules/pkg/index.js" }),
      /denied path substring `node_modules`/,
    );
    assertRefused(await host.call("read_file", { path: "src/../node_modules/pkg/index.js" }));
    assertRefused(await host.call("read_file", { path: ".git/config" }), /`\.git\/`/);
    assertRefused(await host.call("read_file_range", { path: ".git" }));
    symlinkSync(path.join(fx.root, "src", "private"), path.join(fx.root, "innocent"));
    assertRefused(await host.call("read_file", { path: "innocent/key.txt" }), /private/);
    assertRefused(await host.call("write_file", { path: "node_modules/pkg/index.js", content: "pwned" }));
    assert.equal(readFileSync(path.join(fx.root, "node_modules/pkg/index.js"), "utf8"), "module.exports = 1;\n");
  });
});

describe("a root that is itself a symlink", () => {
  let fx: Fixture;
  before(() => {
    fx = makeFixture();
  });
  after(() => fx.cleanup());

  test("works inside, and still refuses what lies beside its target", async () => {
    fx.write({ "a.txt": "A\n" });
    const alias = path.join(fx.base, "alias-root");
    symlinkSync(fx.root, alias);
    writeFileSync(path.join(fx.base, "beside.txt"), SECRET);
    const host = await fx.host({ root: alias });
    assert.equal(host.root, fx.root, "the root is canonical");
    const ok = await host.call("read_file", { path: "a.txt" });
    assert.equal(ok.status, "ok");
    const w = await host.call("write_file", { path: path.join(alias, "b.txt"), content: "B\n" });
    assert.equal(w.status, "ok", JSON.stringify(w));
    assert.equal(readFileSync(path.join(fx.root, "b.txt"), "utf8"), "B\n");
    assertRefused(await host.call("read_file", { path: "../beside.txt" }));
    assertRefused(await host.call("write_file", { path: path.join(alias, "..", "pwned.txt"), content: "x" }));
    assert.equal(existsSync(path.join(fx.base, "pwned.txt")), false);
  });
});

describe("the control plane", () => {
  let fx: Fixture;
  before(() => {
    fx = makeFixture();
  });
  after(() => fx.cleanup());

  test("the state dir and config file, directly and through a symlink, even inside the workspace", async () => {
    // The worst case: the state dir and the config both live inside the workspace.
    const state = path.join(fx.root, ".latch-state");
    const configFile = path.join(fx.root, "agents.toml");
    writeFileSync(configFile, '[tools_policies.local_fs]\n_max_output_bytes = "4096"\n');
    const host = await fx.host({ stateDir: state, config: undefined, configPath: configFile });
    const configBefore = readFileSync(configFile, "utf8");
    symlinkSync(configFile, path.join(fx.root, "cfg-link"));
    symlinkSync(state, path.join(fx.root, "state-link"));

    assertRefused(await host.call("read_file", { path: "agents.toml" }), /control plane/);
    assertRefused(await host.call("read_file", { path: "cfg-link" }), /control plane/);
    assertRefused(
      await host.call("write_file", { path: "agents.toml", content: "[tools_policies.local_fs]\n" }),
      /control plane/,
    );
    assertRefused(await host.call("write_file", { path: "sub/../agents.toml", content: "" }), /control plane/);
    assertRefused(await host.call("read_file", { path: ".latch-state/latch.db" }), /control plane/);
    assertRefused(await host.call("read_file", { path: "state-link/latch.db" }), /control plane/);
    assertRefused(await host.call("write_file", { path: ".latch-state/locks/evil", content: "x" }), /control plane/);
    assertRefused(await host.call("write_file", { path: "state-link/latch.db", content: "x" }), /control plane/);
    assert.equal(readFileSync(configFile, "utf8"), configBefore);
    assert.equal(existsSync(path.join(state, "locks", "evil")), false);
  });

  test("shell arguments naming the control plane are refused, with or without a shell policy", async () => {
    const state = path.join(fx.root, ".latch-state2");
    const configFile = path.join(fx.root, "agents2.toml");
    writeFileSync(configFile, '[tools_policies.local_shell]\n_allowed_commands = "cat,touch,cp"\n');
    const policed = await fx.host({
      stateDir: state,
      config: undefined,
      configPath: configFile,
      approver: { name: "yes", request: async () => ({ approved: true, by: "test" }) },
    });
    symlinkSync(state, path.join(fx.root, "state-link2"));
    for (const command of [
      "cat agents2.toml",
      "touch .latch-state2/evil",
      "touch state-link2/evil",
      "cp agents2.toml copy.toml",
    ]) {
      assertRefused(await policed.call("local_shell", { command }), /control plane/);
    }
    const open = await fx.host({
      stateDir: state,
      approver: { name: "yes", request: async () => ({ approved: true, by: "test" }) },
    });
    assertRefused(
      await open.call("local_shell", { command: "touch", args: [path.join(state, "evil")] }),
      /control plane/,
    );
    assert.equal(existsSync(path.join(state, "evil")), false);
    assert.equal(existsSync(path.join(fx.root, "copy.toml")), false);
  });
});
