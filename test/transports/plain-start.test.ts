// A plain first start of `latch mcp` (`--root DIR`, maybe `--state-dir DIR`; no config file, no skill
// folder, nothing in the environment that changes the tools) is answered from the answers the build
// made, with this start's root, before the program loads (src/transports/mcp/plain-start.ts). What
// must hold: those answers are the program's own, for any root; the program still checks them (a
// planted tool is corrected with list_changed, planted instructions are said on stderr) and keeps its
// own for the next start; any start that is not plain is answered by the program. A copy of dist/
// with planted answers shows which answered.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, test } from "node:test";
import {
  INERT_ENV,
  PLACE_ENV,
  PLAIN_FILE,
  plainRoot,
  ROOT_MARK,
  SHAPING_ENV,
} from "../../src/transports/mcp/plain-start.js";
import { stateDirWritable } from "../../src/transports/mcp/answer-cache.js";
import { CLI } from "../helpers/cli.js";
import type { Fixture } from "../helpers/fixture.js";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { INIT, INITIALIZED, RawStdio, type RpcReply } from "../helpers/raw-stdio.js";
import { fileScope } from "../helpers/scope.js";
import { waitFor } from "../helpers/wait.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// A shell that sets one of these would make every start here not plain.
for (const name of SHAPING_ENV) delete process.env[name];

const { fixture, serve } = fileScope();
const T = { timeout: 60_000 };

const PLANTED = "PLANTED: only the build's file says this";

/** A workspace, a state dir and an empty HOME, all in a fresh fixture. */
function setup() {
  const fx = fixture("latch-plain-");
  fx.write({ "a.txt": "alpha\n" });
  mkdirSync(path.join(fx.base, "home"));
  const env: Record<string, string> = { HOME: path.join(fx.base, "home"), XDG_CONFIG_HOME: "" };
  return { fx, env };
}

/** A copy of the build whose plain answers `edit` changed; its main.js. */
function copyOfBuild(edit: (c: { instructions: string; tools: { name: string; description: string }[] }) => void) {
  const fx = fixture("latch-plain-build-");
  cpSync(path.join(REPO, "dist"), path.join(fx.base, "dist"), { recursive: true });
  copyFileSync(path.join(REPO, "package.json"), path.join(fx.base, "package.json")); // "type": "module"
  symlinkSync(path.join(REPO, "node_modules"), path.join(fx.base, "node_modules"));
  const file = path.join(fx.base, "dist", "cli", PLAIN_FILE);
  const c = JSON.parse(readFileSync(file, "utf8"));
  edit(c);
  writeFileSync(file, JSON.stringify(c));
  return path.join(fx.base, "dist", "cli", "main.js");
}

/** A copy of the build whose plain answers carry PLANTED in read_file's description and before the instructions. */
const planted = (() => {
  let made: string | undefined;
  return () =>
    (made ??= copyOfBuild((c) => {
      c.tools.find((t) => t.name === "read_file")!.description = PLANTED;
      c.instructions = `${PLANTED}\n${c.instructions}`;
    }));
})();

/** initialize, notifications/initialized and tools/list, as a client sends them, all at once. */
async function start(args: string[], env: Record<string, string>, cli = CLI, cwd?: string) {
  const s = serve(args, env, cwd, cli);
  s.send(INIT);
  s.send(INITIALIZED);
  const list = await s.request(2, "tools/list");
  const init = await s.reply(1);
  return { s, init, list };
}

async function stop(s: RawStdio) {
  s.child.stdin.end();
  const { code } = await s.exited;
  assert.equal(code, 0, s.stderr);
}

const describes = (r: RpcReply, text: string) => JSON.stringify(r.result?.tools ?? "").includes(text);
const listChanged = (s: RawStdio) =>
  s.replies.some((m) => (m as { method?: string }).method === "notifications/tools/list_changed");
const kept = (fx: Fixture) => {
  const dir = path.join(fx.state, "mcp-answers");
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
};

describe("latch mcp: a plain first start", () => {
  test(
    "the build's answers are the program's own, for a root with a space, a non-ASCII letter and a link on its way",
    T,
    async () => {
      const { fx, env } = setup();
      const odd = path.join(fx.base, "wörk space");
      mkdirSync(odd);
      writeFileSync(path.join(odd, "b.txt"), "beta\n");
      const link = path.join(fx.base, "via-link");
      symlinkSync(odd, link);
      const plain = await start(["--root", link, "--state-dir", fx.state], env);
      // The same start, not plain: a config file (empty, so the same settings) makes the program answer.
      const config = path.join(fx.base, "empty.toml");
      writeFileSync(config, "");
      const own = await start(["--root", link, "--state-dir", path.join(fx.base, "state2")], {
        ...env,
        LATCH_CONFIG: config,
      });
      assert.deepEqual(plain.init.result, own.init.result);
      assert.deepEqual(plain.list.result, own.list.result);
      assert.match(plain.init.result.instructions, new RegExp(`Workspace: ${odd}\\.`), "the root, resolved");
      const read = await plain.s.call(3, "read_file", { path: "b.txt" });
      assert.match(JSON.stringify(read.result), /beta/, "a call is served, in that root");
      await stop(plain.s);
      await stop(own.s);
      assert.equal(listChanged(plain.s), false, "nothing to correct");
      assert.doesNotMatch(plain.s.stderr, /instructions answered at initialize/);
      assert.equal(kept(fx).length, 0, "the same answers: nothing kept (the next start is plain again)");
    },
  );

  test(
    "they come from the build's file, with this start's root; the program corrects planted tools and says so of instructions",
    T,
    async () => {
      const { fx, env } = setup();
      const s = await start(["--state-dir", fx.state, "--root", fx.root], env, planted());
      assert.ok(describes(s.list, PLANTED), "the first tools/list came from the build's file");
      assert.ok(s.init.result.instructions.startsWith(PLANTED), "so did initialize");
      assert.ok(s.init.result.instructions.includes(`Workspace: ${fx.root}.`), "with this start's root");
      assert.ok(!s.init.result.instructions.includes(ROOT_MARK));
      assert.ok(await waitFor(() => listChanged(s.s)), "notifications/tools/list_changed");
      const again = await s.s.request(4, "tools/list");
      assert.ok(!describes(again, PLANTED), "the program's own list");
      await stop(s.s);
      assert.match(s.s.stderr, /the instructions answered at initialize were the build's for a plain start/);
      const [file] = kept(fx);
      assert.doesNotMatch(readFileSync(path.join(fx.state, "mcp-answers", file), "utf8"), /PLANTED/);
    },
  );

  test("a start that is not plain is answered by the program", T, async () => {
    const { fx, env } = setup();
    const cli = planted();
    const base = ["--root", fx.root, "--state-dir", fx.state];
    const xdg = path.join(fx.base, "xdg");
    const cases: [string, () => { args?: string[]; env?: Record<string, string>; cwd?: string }][] = [
      [
        "a config file in the XDG config folder",
        () => {
          mkdirSync(path.join(xdg, "latch"), { recursive: true });
          writeFileSync(path.join(xdg, "latch", "agents.toml"), "");
          return { env: { XDG_CONFIG_HOME: xdg } };
        },
      ],
      [
        "a config file under HOME",
        () => {
          mkdirSync(path.join(env.HOME, ".config", "latch"), { recursive: true });
          writeFileSync(path.join(env.HOME, ".config", "latch", "agents.toml"), "");
          return {};
        },
      ],
      ["EXA_API_KEY (web_search is listed)", () => ({ env: { HOME: path.join(fx.base, "home2"), EXA_API_KEY: "k" } })],
      [
        "the user's skill folder",
        () => {
          mkdirSync(path.join(fx.base, "home3", ".config", "latch", "skills"), { recursive: true });
          return { env: { HOME: path.join(fx.base, "home3") } };
        },
      ],
      [
        "a skill folder in the workspace",
        () => {
          mkdirSync(path.join(fx.base, "ws2", ".agents", "skills"), { recursive: true });
          return { args: ["--root", path.join(fx.base, "ws2")], env: { HOME: path.join(fx.base, "home2") } };
        },
      ],
      ["another flag", () => ({ args: [...base, "--yes"], env: { HOME: path.join(fx.base, "home2") } })],
      [
        "no --root",
        () => ({ args: ["--state-dir", fx.state], env: { HOME: path.join(fx.base, "home2") }, cwd: fx.root }),
      ],
    ];
    mkdirSync(path.join(fx.base, "home2"));
    for (const [what, make] of cases) {
      const c = make();
      const s = await start(c.args ?? base, { ...env, ...c.env }, cli, c.cwd);
      assert.ok(!describes(s.list, PLANTED), `${what}: the program's list`);
      assert.ok(!String(s.init.result.instructions).includes(PLANTED), `${what}: the program's instructions`);
      await stop(s.s);
    }
    // A build's file whose instructions have no place for the root is not used.
    const unmarked = copyOfBuild((c) => {
      c.tools.find((t) => t.name === "read_file")!.description = PLANTED;
      c.instructions = c.instructions.split(ROOT_MARK).join("/somewhere");
    });
    const noMark = await start(base, { ...env, HOME: path.join(fx.base, "home2") }, unmarked);
    assert.ok(!describes(noMark.list, PLANTED), "no root mark: the program's list");
    await stop(noMark.s);
    // The same fixture, plain again: the cases above did not miss because the copy cannot answer.
    const plainAgain = await start(
      ["--root", fx.root, "--state-dir", path.join(fx.base, "s9")],
      {
        HOME: path.join(fx.base, "home2"),
        XDG_CONFIG_HOME: "",
      },
      cli,
    );
    assert.ok(describes(plainAgain.list, PLANTED));
    await stop(plainAgain.s);
  });
});

describe("latch mcp: a plain first start's client leaves", () => {
  test(
    "stdin closed during the entry's wait: what was sent is served, the running call is cancelled, latch stops",
    T,
    async () => {
      const { fx, env } = setup();
      const s = serve(["--root", fx.root, "--state-dir", fx.state], env);
      // One write and the end of stdin behind it: all read by the entry before the program loads.
      const call = { name: "local_shell", arguments: { command: "sleep 30" } };
      s.child.stdin.end(
        [INIT, INITIALIZED, { jsonrpc: "2.0", id: 2, method: "tools/list" }]
          .concat([{ jsonrpc: "2.0", id: 3, method: "tools/call", params: call } as never])
          .map((m) => JSON.stringify(m) + "\n")
          .join(""),
      );
      const end = await s.exited;
      assert.equal(end.code, 0, s.stderr);
      assert.match(s.stderr, /the client closed stdin; 1 running call was cancelled/, s.stderr);
      assert.deepEqual(
        s.replies.filter((r) => r.id !== undefined).map((r) => r.id),
        [1, 2, 3],
      );
    },
  );
});

describe("latch: the folder it started in", () => {
  test("removed before the start: one line that says so, exit 1, nothing answered", T, async () => {
    const { fx, env } = setup();
    const gone = path.join(fx.base, "gone");
    mkdirSync(gone);
    const child = spawn(
      "/bin/sh",
      [
        "-c",
        'cd "$1" && rmdir "$1" && exec "$2" "$3" mcp --root "$4" --state-dir "$5"',
        "sh",
        gone,
        process.execPath,
        CLI,
        fx.root,
        fx.state,
      ],
      { env: { ...process.env, ...env } },
    );
    after(() => void child.kill("SIGKILL"));
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.stdin.end(
      [INIT, INITIALIZED, { jsonrpc: "2.0", id: 2, method: "tools/list" }]
        .map((m) => JSON.stringify(m) + "\n")
        .join(""),
    );
    const code = await new Promise((r) => child.on("exit", r));
    assert.equal(code, 1, err);
    assert.equal(out, "", "nothing answered");
    assert.equal(
      err,
      "latch: the folder it was started in no longer exists (ENOENT); start latch from a folder that exists.\n",
    );
  });
});

describe("which start is plain (plainRoot)", () => {
  const fx = fixture("latch-plain-unit-");
  const home = path.join(fx.base, "home");
  mkdirSync(home);
  const env = { HOME: home, PATH: "/usr/bin" };
  const state = path.join(fx.base, "state");
  const is = (args: string[], e: NodeJS.ProcessEnv = env, cwd = fx.base) => plainRoot(["mcp", ...args], e, cwd);
  const writable = stateDirWritable;

  test("the arguments: --root once, --state-dir at most once, nothing else", () => {
    assert.equal(is(["--root", fx.root]), fx.root);
    assert.equal(is([`--root=${fx.root}`, `--state-dir=${state}`]), fx.root);
    assert.equal(is(["--root", "ws"]), fx.root, "relative to the folder latch starts in");
    for (const args of [
      [],
      ["--state-dir", state],
      ["--root", fx.root, "--root", fx.root],
      ["--root", fx.root, "--state-dir", state, "--state-dir", state],
      ["--root", fx.root, "--yes"],
      ["--root", fx.root, "--envelope", "strict"],
      ["--state-dir", "--root", "--root", fx.root],
      ["--root", fx.root, "--"],
      ["--root"],
      ["--root", "--yes"],
      ["--root="],
      ["-r", fx.root],
    ])
      assert.equal(is(args), undefined, args.join(" "));
    assert.equal(plainRoot(["call", "--root", fx.root], env, fx.base), undefined, "another command");
  });

  test("the environment: a shaping variable set at all, even empty", () => {
    for (const name of SHAPING_ENV) assert.equal(is(["--root", fx.root], { ...env, [name]: "" }), undefined, name);
    assert.equal(is(["--root", fx.root], { ...env, LATCH_LOG: "debug", LATCH_SESSION: "s" }), fx.root);
  });

  test("the root: a folder, by a name that is UTF-8", () => {
    writeFileSync(path.join(fx.base, "file"), "");
    assert.equal(is(["--root", path.join(fx.base, "file")]), undefined, "a file");
    assert.equal(is(["--root", path.join(fx.base, "missing")]), undefined, "missing");
    const bytes = Buffer.concat([Buffer.from(`${fx.base}/bad-`), Buffer.from([0xff])]);
    mkdirSync(bytes);
    symlinkSync(bytes, Buffer.from(`${fx.base}/to-bad`));
    assert.equal(is(["--root", "to-bad"]), undefined, "a real path that is not UTF-8");
  });

  test("the state dir (stateDirWritable, for kept and build answers alike): writable, or creatable where it is missing", () => {
    assert.equal(writable(path.join(fx.base, "new", "deeper")), true, "made by the program");
    writeFileSync(path.join(fx.base, "not-a-dir"), "", { mode: 0o755 }); // access(2) alone would let it pass
    assert.equal(writable(path.join(fx.base, "not-a-dir")), false, "a file");
    assert.equal(writable(path.join(fx.base, "not-a-dir", "below")), false, "under a file");
    symlinkSync(path.join(fx.base, "nowhere"), path.join(fx.base, "dangling"));
    assert.equal(writable(path.join(fx.base, "dangling")), false, "a dangling link");
    assert.equal(writable(path.join(fx.base, "dangling", "below")), false, "under one");
  });

  test("the state dir: on a read-only disk, or its latch.db read-only, no answers from the entry", () => {
    const disk = path.join(fx.base, "ro");
    const unmount = mountTmpfs(disk, "size=1m");
    const db = path.join(disk, "state", "latch.db");
    try {
      mkdirSync(path.dirname(db));
      writeFileSync(db, "");
      mkdirSync(path.join(disk, "state-new")); // no latch.db yet
      assert.equal(writable(path.dirname(db)), true, "writable");
      // Root passes every mode check: only a read-only mount makes access(2) say no.
      execFileSync("mount", ["--bind", db, db]);
      try {
        execFileSync("mount", ["-o", "remount,ro,bind", db]);
        assert.equal(writable(path.dirname(db)), false, "latch.db read-only");
      } finally {
        execFileSync("umount", [db]);
      }
      execFileSync("mount", ["-o", "remount,ro", disk]);
      assert.equal(writable(path.dirname(db)), false, "the state dir read-only");
      assert.equal(writable(path.join(disk, "state-new")), false, "an empty one, read-only");
      assert.equal(writable(path.join(disk, "new")), false, "nowhere to make it");
    } finally {
      unmount();
    }
  });

  test("the config file and the skill folders: none", () => {
    const ws = path.join(fx.base, "ws-skills");
    mkdirSync(path.join(ws, ".claude", "skills"), { recursive: true });
    assert.equal(is(["--root", ws]), undefined, "the workspace's .claude/skills");
    const xdg = path.join(fx.base, "xdg");
    mkdirSync(path.join(xdg, "latch"), { recursive: true });
    assert.equal(is(["--root", fx.root], { ...env, XDG_CONFIG_HOME: xdg }), fx.root, "an XDG folder without a config");
    symlinkSync(path.join(fx.base, "nowhere"), path.join(xdg, "latch", "agents.toml"));
    assert.equal(is(["--root", fx.root], { ...env, XDG_CONFIG_HOME: xdg }), undefined, "a dangling link as the config");
  });

  test("every environment variable src/ reads is named here: shaping, a place, or inert", () => {
    // `env.NAME`, `env["NAME"]` and `X_VAR = "NAME"`; lower-case names with an underscore too
    // (npm_config_registry), but not the envelope's fields (`env` is also an envelope's name).
    const ENV_READ =
      /[eE]nv\??\.([A-Z][A-Z0-9_]+|[a-z][a-z0-9]*_[a-z0-9_]+)\b|[eE]nv\[["']([A-Za-z][A-Za-z0-9_]+)["']\]|_VAR = "([A-Z][A-Z0-9_]+)"/g;
    const ENVELOPE_FIELDS = new Set(["always_allow", "always_deny", "default_action"]);
    const named = new Set([...SHAPING_ENV, ...PLACE_ENV, ...INERT_ENV, ...ENVELOPE_FIELDS]);
    const read = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith(".ts"))
          for (const m of readFileSync(p, "utf8").matchAll(ENV_READ)) read.add(m[1] ?? m[2] ?? m[3]);
      }
    };
    walk(path.join(REPO, "src"));
    assert.ok(
      ["EXA_API_KEY", "LATCH_CONFIG", "HOME", "npm_config_registry"].every((n) => read.has(n)),
      [...read].join(),
    );
    assert.deepEqual([...read].filter((n) => !named.has(n)).sort(), []);
  });

  test("the build writes the file the entry reads, with the root's place marked once", () => {
    const c = JSON.parse(readFileSync(path.join(path.dirname(CLI), PLAIN_FILE), "utf8"));
    assert.equal(c.v, 1);
    assert.equal(c.instructions.split(ROOT_MARK).length, 2);
    assert.ok(c.tools.some((t: { name: string }) => t.name === "read_file"));
  });
});
