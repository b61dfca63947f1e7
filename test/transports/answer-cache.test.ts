// `latch mcp` over stdio answers a later start's first initialize and tools/list from the answers the
// last start with the same inputs gave, before the program loads (src/transports/mcp/answer-cache.ts).
// What must hold: the answers are the start's own (the program checks them, says so when the tools
// were not and makes the file anew); a changed input (the config file, a skill folder, the arguments,
// the environment) means the program answers; what the client sends around them is served in order,
// also when it closes stdin at once; and the file lives in the state dir, out of every tool's reach.
// Each test proves where an answer came from by planting a description only the kept file holds.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { stampOf, startKey } from "../../src/transports/mcp/answer-cache.js";
import { ROOT_MARK } from "../../src/transports/mcp/plain-start.js";
import type { Fixture } from "../helpers/fixture.js";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { CLI } from "../helpers/cli.js";
import { INIT, INITIALIZED, RawStdio, type RpcReply } from "../helpers/raw-stdio.js";
import { fileScope } from "../helpers/scope.js";
import { waitFor } from "../helpers/wait.js";

const { fixture, serve } = fileScope();
/** A test that waits for an answer that never comes fails in this time, not never. */
const T = { timeout: 60_000 };

const PLANTED = "PLANTED: only the kept file says this";
/** ROOT_MARK as JSON writes it: the kept file for a start elsewhere (src/transports/mcp/elsewhere.ts). */
const MARK_IN_JSON = JSON.stringify(ROOT_MARK).slice(1, -1);

function setup() {
  const fx = fixture("latch-answers-");
  fx.write({ "a.txt": "alpha\n" });
  // HOME and the XDG config folder inside the fixture: no user config or skill folder is read. A
  // config file there (the default settings) makes each start not plain (plain-start.test.ts has those).
  const env = { HOME: fx.base, XDG_CONFIG_HOME: path.join(fx.base, "config") };
  mkdirSync(path.join(fx.base, "config", "latch"), { recursive: true });
  writeFileSync(path.join(fx.base, "config", "latch", "agents.toml"), "# the test's config\n");
  const dir = path.join(fx.state, "mcp-answers");
  const files = () => readdirSync(dir).filter((n) => n.endsWith(".json"));
  /** The kept files of a start here, and those for the same start in another workspace (its root marked). */
  const marked = (n: string) => readFileSync(path.join(dir, n), "utf8").includes(MARK_IN_JSON);
  const exact = () => files().filter((n) => !marked(n));
  const elsewhere = () => files().filter(marked);
  /** A kept file (the test's start key), its read_file description replaced by PLANTED. */
  const plant = (part: "tools" | "instructions" = "tools", name = exact()[0]) => {
    const file = path.join(dir, name);
    const kept = JSON.parse(readFileSync(file, "utf8"));
    if (part === "tools") kept.tools.find((t: { name: string }) => t.name === "read_file").description = PLANTED;
    else kept.instructions = PLANTED;
    writeFileSync(file, JSON.stringify(kept));
    return file;
  };
  return { fx, env, dir, files, exact, elsewhere, plant };
}

/**
 * One `latch mcp` start: initialize, notifications/initialized and tools/list, sent at once. A client
 * that waits for the initialize answer first can send its tools/list after the entry's short wait on a
 * busy machine, and the program answers it (the ping test below is that case, on purpose).
 */
async function start(fx: Fixture, env: Record<string, string>, args: string[] = [], root = fx.root) {
  const s = serve(["--root", root, "--state-dir", fx.state, ...args], env);
  s.send(INIT);
  s.send(INITIALIZED);
  s.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  const init = await s.reply(1);
  const list = await s.reply(2);
  return { s, init, list };
}

async function stop(s: RawStdio) {
  s.child.stdin.end();
  const { code } = await s.exited;
  assert.equal(code, 0, s.stderr);
}

const describes = (r: RpcReply, text: string) => JSON.stringify(r.result.tools).includes(text);
const listChanged = (s: RawStdio) =>
  s.replies.some((m) => (m as { method?: string }).method === "notifications/tools/list_changed");

describe("latch mcp: a later start's first answers", () => {
  test(
    "are the last start's, kept in the state dir (0700, files 0600), equal to its own; calls are served",
    T,
    async () => {
      const { fx, env, dir, files, exact, elsewhere } = setup();
      const first = await start(fx, env);
      await stop(first.s);
      assert.equal(exact().length, 1, "the first start keeps its answers");
      assert.equal(elsewhere().length, 1, "and the same with its root marked, for a start elsewhere");
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      for (const n of files()) assert.equal(statSync(path.join(dir, n)).mode & 0o777, 0o600);
      const kept = readFileSync(path.join(dir, exact()[0]), "utf8");
      const second = await start(fx, env);
      assert.deepEqual(second.init.result, first.init.result);
      assert.deepEqual(second.list.result, first.list.result);
      const read = await second.s.call(3, "read_file", { path: "a.txt" });
      assert.match(JSON.stringify(read.result), /alpha/);
      await stop(second.s);
      assert.equal(listChanged(second.s), false, "the same tools: no list_changed");
      assert.equal(
        readFileSync(path.join(dir, exact()[0]), "utf8"),
        kept,
        "the same answers: the file is not made anew",
      );
      assert.equal(files().length, 2);
    },
  );

  test("are kept also when the SDK answered the first tools/list (a client that lists after a ping)", T, async () => {
    // A ping is the early answers' to hold: the SDK loads for it and answers the tools/list after it,
    // as it does for a busy client whose tools/list comes past early.ts's wait after initialize.
    const { fx, env, exact, elsewhere } = setup();
    const s = serve(["--root", fx.root, "--state-dir", fx.state], env);
    s.send(INIT);
    await s.reply(1);
    s.send(INITIALIZED);
    await s.request("p", "ping");
    const list = await s.request(2, "tools/list");
    await stop(s);
    assert.equal(exact().length, 1, "the SDK's listing was kept");
    assert.equal(elsewhere().length, 1);
    const second = await start(fx, env);
    assert.deepEqual(second.list.result, list.result);
    await stop(second.s);
    assert.equal(listChanged(second.s), false);
  });

  test(
    "when the kept tools are not this start's, the client is told to list again, and the file is made anew",
    T,
    async () => {
      const { fx, env, exact, dir, plant } = setup();
      await stop((await start(fx, env)).s);
      const file = plant("tools");
      const second = await start(fx, env);
      assert.ok(describes(second.list, PLANTED), "the first tools/list came from the kept file");
      assert.ok(await waitFor(() => listChanged(second.s)), "notifications/tools/list_changed");
      const again = await second.s.request(4, "tools/list");
      assert.ok(!describes(again, PLANTED), "the program's own list");
      assert.ok(await waitFor(() => !readFileSync(file, "utf8").includes("PLANTED")), "the file made anew");
      await stop(second.s);
      assert.equal(exact().length, 1);
      assert.doesNotMatch(second.s.stderr, /earlier start's/, "the instructions were this start's");
      assert.ok(
        readdirSync(dir).every((n) => !n.endsWith(".tmp")),
        "no temp file left",
      );
    },
  );

  test("kept instructions that are not this start's are said on stderr, and the file is made anew", T, async () => {
    const { fx, env, plant } = setup();
    await stop((await start(fx, env)).s);
    const file = plant("instructions");
    const second = await start(fx, env);
    assert.equal(second.init.result.instructions, PLANTED, "initialize came from the kept file");
    assert.ok(await waitFor(() => !readFileSync(file, "utf8").includes("PLANTED")), "the file made anew");
    await stop(second.s);
    assert.match(second.s.stderr, /the instructions answered at initialize were an earlier start's/);
    assert.equal(listChanged(second.s), false, "the tools were this start's");
  });

  test(
    "a changed config file, a new skill folder, other arguments or another environment: the program answers",
    T,
    async () => {
      const { fx, env, exact, elsewhere, plant } = setup();
      await stop((await start(fx, env)).s);
      const [own] = exact();
      const changes: [string, () => { env?: Record<string, string>; args?: string[] }][] = [
        [
          "the config file changed",
          () => {
            writeFileSync(path.join(fx.base, "config", "latch", "agents.toml"), "# written after the first start\n");
            return {};
          },
        ],
        ["another argument", () => ({ args: ["--approval-wait", "7"] })],
        ["another environment", () => ({ env: { LATCH_TEST_OTHER: "1" } })],
        [
          "a skill folder made in the workspace",
          () => {
            mkdirSync(path.join(fx.root, ".claude", "skills"), { recursive: true });
            return {};
          },
        ],
      ];
      for (const [what, change] of changes) {
        plant("tools", own);
        const made = change();
        const s = await start(fx, { ...env, ...made.env }, made.args);
        assert.ok(!describes(s.list, PLANTED), `${what}: the program's list`);
        await stop(s.s);
        assert.equal(listChanged(s.s), false, `${what}: nothing to correct`);
      }
      // Other arguments are another key, with a file of its own (and one for elsewhere); the config file's
      // start made its key's anew; another environment is another key, but one that does not shape the
      // answers: it took those kept for a start elsewhere, the program's own, and kept nothing; the skill
      // folder's kept nothing (its list comes from a logged skill call): the planted file stays as planted.
      assert.equal(exact().length, 2);
      assert.equal(elsewhere().length, 2);
      assert.match(readFileSync(path.join(fx.state, "mcp-answers", own), "utf8"), /PLANTED/);
    },
  );

  test(
    "files made in the workspace leave the kept answers standing; a root link that leads elsewhere does not",
    T,
    async () => {
      const { fx, env, plant } = setup();
      const link = path.join(fx.base, "ws-link");
      symlinkSync(fx.root, link);
      const other = path.join(fx.base, "ws-other");
      mkdirSync(other);
      const begin = () => start(fx, env, [], link);
      const first = await begin();
      await stop(first.s);
      assert.match(first.init.result.instructions, new RegExp(`Workspace: ${fx.root}\\.`));
      plant("tools");
      fx.write({ "new-file.txt": "made between the starts\n", "sub/deeper.txt": "too\n" });
      const second = await begin();
      assert.ok(describes(second.list, PLANTED), "the workspace's own files are not what the answers came from");
      await stop(second.s);
      plant("tools");
      unlinkSync(link);
      symlinkSync(other, link);
      const third = await begin();
      assert.ok(!describes(third.list, PLANTED), "the root now resolves elsewhere: the program answers");
      assert.match(third.init.result.instructions, new RegExp(`Workspace: ${other}\\.`));
      await stop(third.s);
    },
  );

  test("a client that sends its messages and a call and closes stdin at once is answered, in order", T, async () => {
    const { fx, env } = setup();
    await stop((await start(fx, env)).s);
    const s = serve(["--root", fx.root, "--state-dir", fx.state], env);
    s.write(
      [
        JSON.stringify(INIT),
        JSON.stringify(INITIALIZED),
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
        JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "read_file", arguments: { path: "a.txt" } },
        }),
      ].join("\n"),
    );
    s.child.stdin.end();
    const { code } = await s.exited;
    assert.equal(code, 0, s.stderr);
    assert.deepEqual(
      s.replies.filter((r) => r.id !== undefined).map((r) => r.id),
      [1, 2, 3],
    );
    assert.match(JSON.stringify(s.replies.find((r) => r.id === 3)?.result), /alpha/);
  });

  test(
    "a state dir that became read-only: nothing is answered from it, and latch stops with the reason",
    T,
    async () => {
      const { fx, env } = setup();
      const disk = path.join(fx.base, "disk");
      const unmount = mountTmpfs(disk, "size=16m");
      try {
        const state = path.join(disk, "state");
        const first = serve(["--root", fx.root, "--state-dir", state], env);
        await first.init();
        await first.request(2, "tools/list");
        await stop(first);
        assert.ok(existsSync(path.join(state, "mcp-answers")), "the first start kept its answers");
        execFileSync("mount", ["-o", "remount,ro", disk]);
        const second = serve(["--root", fx.root, "--state-dir", state], env);
        second.send(INIT);
        const { code } = await second.exited;
        assert.equal(code, 1, second.stderr);
        assert.deepEqual(second.replies, [], "no answer before the state dir is found unusable");
        assert.match(second.stderr, /read-only|EROFS|ESTATE/);
      } finally {
        unmount();
      }
    },
  );

  test(
    "a start that fails after its first answers (a latch.db that is not a database) exits 1 at once",
    T,
    async () => {
      const { fx, env } = setup();
      await stop((await start(fx, env)).s);
      for (const f of ["latch.db-wal", "latch.db-shm"]) rmSync(path.join(fx.state, f), { force: true });
      writeFileSync(path.join(fx.state, "latch.db"), "not a database, written after the first start\n".repeat(200));
      const s = serve(["--root", fx.root, "--state-dir", fx.state], env);
      s.send(INIT);
      // stdin stays open: the start must end on its own, not when the client leaves.
      const { code } = await s.exited;
      assert.equal(code, 1, s.stderr);
      assert.match(s.stderr, /latch\.db|database/);
    },
  );

  test(
    "a policy program or seal key gone since the last start: nothing is answered, latch stops with the reason",
    T,
    async () => {
      const { fx, env } = setup();
      const program = path.join(fx.base, "policy.sh");
      writeFileSync(program, `#!/bin/sh\necho '{"decision":"abstain","reason":"no opinion"}'\n`, { mode: 0o755 });
      const args = ["--policy", program];
      await stop((await start(fx, env, args)).s);
      rmSync(program);
      const s = serve(["--root", fx.root, "--state-dir", fx.state, ...args], env);
      s.send(INIT);
      const { code } = await s.exited;
      assert.equal(code, 1, s.stderr);
      assert.deepEqual(s.replies, [], "no answer from the kept file");
      assert.match(s.stderr, /policy\.sh/);
    },
  );

  test(
    "a --policy-log file (never appended to) keeps nothing: a later start is refused before any answer",
    T,
    async () => {
      const { fx, env, dir } = setup();
      const log = path.join(fx.base, "one.jsonl");
      await stop((await start(fx, env, ["--policy-log", log])).s);
      assert.ok(!existsSync(dir) || readdirSync(dir).length === 0, "nothing kept");
      const s = serve(["--root", fx.root, "--state-dir", fx.state, "--policy-log", log], env);
      s.send(INIT);
      const { code } = await s.exited;
      assert.equal(code, 1, s.stderr);
      assert.deepEqual(s.replies, []);
    },
  );

  test(
    "a client that stops reading stdout: latch says so and exits 1, as a start without kept answers",
    T,
    async () => {
      const { fx, env } = setup();
      await stop((await start(fx, env)).s);
      const s = serve(["--root", fx.root, "--state-dir", fx.state], env);
      s.child.stdout.destroy();
      s.write(
        [
          JSON.stringify(INIT),
          JSON.stringify(INITIALIZED),
          JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
        ].join("\n"),
      );
      const { code } = await s.exited;
      assert.equal(code, 1, s.stderr);
      assert.match(s.stderr, /stdout failed \(EPIPE\)/);
    },
  );

  test(
    "a kept file that is a FIFO, a link, too large or of the wrong shape is not used: the program answers",
    T,
    async () => {
      const { fx, env, files, dir } = setup();
      await stop((await start(fx, env)).s);
      const file = path.join(dir, files()[0]);
      const good = readFileSync(file, "utf8");
      const kept = JSON.parse(good);
      const planted = (k: Record<string, unknown>) => JSON.stringify({ ...kept, instructions: PLANTED, ...k });
      const cases: [string, () => void][] = [
        ["a FIFO", () => execFileSync("mkfifo", [file])],
        [
          "a link to the good file",
          () => (writeFileSync(`${file}.real`, planted({})), symlinkSync(`${file}.real`, file)),
        ],
        ["over 1 MiB", () => writeFileSync(file, planted({ pad: "x".repeat(1 << 20) }))],
        ["no inputs", () => writeFileSync(file, planted({ inputs: [] }))],
        ["tools that are not tools", () => writeFileSync(file, planted({ tools: [null, 5] }))],
      ];
      for (const [what, make] of cases) {
        rmSync(file, { force: true });
        rmSync(`${file}.real`, { force: true });
        make();
        const s = await start(fx, env);
        assert.notEqual(s.init.result.instructions, PLANTED, `${what}: the program's instructions`);
        assert.ok(
          s.list.result.tools.every((t: { name?: unknown }) => typeof t.name === "string"),
          what,
        );
        await stop(s.s);
      }
    },
  );

  test("the config is stamped as the host read it: an edit after that read is another config", T, async () => {
    const { fx } = setup();
    const file = path.join(fx.base, "agents.toml");
    const text = "# as read at the start\n";
    writeFileSync(file, text);
    const host = await fx.host({ config: undefined, configPath: file });
    writeFileSync(file, "# edited while the start went on\n");
    const config = host.listingInputs()?.find((i) => i.path === file);
    assert.deepEqual(config, {
      path: file,
      by: "text",
      stamp: `sha256:${createHash("sha256").update(text).digest("hex")}`,
    });
    assert.notEqual(stampOf(file, "text"), config.stamp, "the next start sees the edit");
  });

  test(
    "a client that sends initialize after the entry's wait is answered by the program, and nothing is said of the kept file",
    T,
    async () => {
      const setUp = setup();
      const { fx, plant } = setUp;
      const env = { ...setUp.env, LATCH_LOG: "info" }; // both starts: one key
      await stop((await start(fx, env)).s);
      const file = plant("instructions");
      const s = serve(["--root", fx.root, "--state-dir", fx.state], env);
      // The program says it serves once it reads stdin itself: the entry's wait is over, however long
      // the machine took to get there (a fixed delay is not enough on a loaded machine).
      assert.ok(await waitFor(() => s.stderr.includes("over stdio"), 30_000), s.stderr);
      s.send(INIT);
      const init = await s.reply(1);
      s.send(INITIALIZED);
      await s.request(2, "tools/list");
      assert.notEqual(init.result.instructions, PLANTED);
      assert.ok(await waitFor(() => !readFileSync(file, "utf8").includes("PLANTED")), "the file made anew");
      await stop(s);
      assert.doesNotMatch(s.stderr, /earlier start's/, "no kept answer was given");
    },
  );

  test("a first line that is not a plain initialize is the program's, answered as before", T, async () => {
    const { fx, env } = setup();
    await stop((await start(fx, env)).s);
    const s = serve(["--root", fx.root, "--state-dir", fx.state], env);
    s.write("{not json");
    const bad = await s.reply(null);
    assert.equal(bad.error?.code, -32700);
    await s.init();
    const list = await s.request(2, "tools/list");
    assert.ok(list.result.tools.length > 0);
    await stop(s);
  });

  test("a state dir in the workspace: nothing is kept there, and a file put there before is not taken", T, async () => {
    // A folder the model's tools could write before this start made it its state dir: a file the
    // model left there under this start's key must not become the client's first instructions.
    const { fx, env } = setup();
    const state = path.join(fx.root, ".latch-state");
    const args = ["--root", fx.root, "--state-dir", state];
    const first = await start(fx, env, [], fx.root);
    await stop(first.s);
    const dir = path.join(state, "mcp-answers");
    const key = startKey(
      ["mcp", ...args],
      path.join(path.dirname(CLI), "program.cjs"),
      { ...process.env, ...env },
      process.cwd(),
    );
    mkdirSync(dir, { recursive: true });
    const planted = path.join(dir, `${key}.json`);
    const [kept] = readdirSync(path.join(fx.state, "mcp-answers")).filter((n) => n.endsWith(".json"));
    const file = JSON.parse(readFileSync(path.join(fx.state, "mcp-answers", kept), "utf8"));
    file.instructions = PLANTED;
    writeFileSync(planted, JSON.stringify(file));
    const s = serve(args, env);
    s.send(INIT);
    const init = await s.reply(1);
    s.send(INITIALIZED);
    await s.request(2, "tools/list");
    await stop(s);
    assert.notEqual(init.result.instructions, PLANTED, "the program's own instructions");
    assert.match(init.result.instructions, new RegExp(`Workspace: ${fx.root}\\.`));
    assert.deepEqual(readdirSync(dir), [`${key}.json`], "nothing kept beside it");
    assert.match(readFileSync(planted, "utf8"), /PLANTED/, "nor over it");
  });
});

describe("latch mcp: a first start in a new workspace", () => {
  /** A workspace beside the fixture's, with a file to read. */
  const workspace = (fx: Fixture, name: string) => {
    const ws = path.join(fx.base, name);
    mkdirSync(ws);
    writeFileSync(path.join(ws, "b.txt"), `${name}\n`);
    return ws;
  };

  test("takes the answers the same start kept in another, with its own root; the program checks them", T, async () => {
    const { fx, env, files, exact, elsewhere, plant } = setup();
    const first = await start(fx, env);
    await stop(first.s);
    const [marked] = elsewhere();
    const file = plant("tools", marked);
    const b = workspace(fx, "ws-b");
    const second = await start(fx, env, [], b);
    assert.match(second.init.result.instructions, new RegExp(`Workspace: ${b}\\.`), "its own root");
    assert.doesNotMatch(second.init.result.instructions, new RegExp(`Workspace: ${fx.root}\\.`), "not the other's");
    assert.ok(describes(second.list, PLANTED), "the first tools/list came from the marked file");
    assert.ok(await waitFor(() => listChanged(second.s)), "notifications/tools/list_changed");
    const again = await second.s.request(4, "tools/list");
    assert.deepEqual(again.result, first.list.result, "the program's own list, as in the first workspace");
    const read = await second.s.call(5, "read_file", { path: "b.txt" });
    assert.match(JSON.stringify(read.result), /ws-b/, "calls are served in the new workspace");
    await stop(second.s);
    assert.ok(!readFileSync(file, "utf8").includes("PLANTED"), "the marked file made anew");
    assert.doesNotMatch(second.s.stderr, /earlier start's/, "the instructions were this start's");
    // A third workspace: the answers kept elsewhere are its own; nothing is corrected, nothing kept.
    const before = files().sort();
    const c = workspace(fx, "ws-c");
    const third = await start(fx, env, [], c);
    assert.equal(
      third.init.result.instructions,
      first.init.result.instructions.split(fx.root).join(c),
      "the first start's instructions, with this root",
    );
    assert.deepEqual(third.list.result, first.list.result);
    await stop(third.s);
    assert.equal(listChanged(third.s), false);
    assert.deepEqual(files().sort(), before, "nothing kept: the answers given were its own");
    assert.equal(exact().length, 2, "the first and the second workspace's");
  });

  test(
    "are the program's where the new workspace holds what they came from, or the start differs elsewhere",
    T,
    async () => {
      const { fx, env, elsewhere, plant } = setup();
      await stop((await start(fx, env)).s);
      const [marked] = elsewhere();
      const cases: [string, () => { root: string; args?: string[] }][] = [
        [
          "a skill folder in the new workspace",
          () => {
            const root = workspace(fx, "ws-skills");
            mkdirSync(path.join(root, ".agents", "skills"), { recursive: true });
            return { root };
          },
        ],
        ["another argument", () => ({ root: workspace(fx, "ws-arg"), args: ["--approval-wait", "7"] })],
      ];
      for (const [what, make] of cases) {
        plant("tools", marked);
        const { root, args } = make();
        const s = await start(fx, env, args, root);
        assert.ok(!describes(s.list, PLANTED), `${what}: the program's list`);
        assert.match(s.init.result.instructions, new RegExp(`Workspace: ${root}\\.`), what);
        await stop(s.s);
        assert.equal(listChanged(s.s), false, `${what}: nothing to correct`);
      }
      assert.match(readFileSync(path.join(fx.state, "mcp-answers", marked), "utf8"), /PLANTED/, "not taken");
    },
  );

  test("a start whose answers may hang on its workspace keeps none for elsewhere", T, async () => {
    // Each started in its root, as a client that runs `latch mcp --root .` in the project does.
    const cases: [string, (fx: Fixture) => { args?: string[]; env?: Record<string, string>; config?: string }][] = [
      [
        "a config file inside the workspace, named from it",
        (fx) => {
          writeFileSync(path.join(fx.root, "agents.toml"), "# the workspace's config\n");
          return { args: ["--config", "agents.toml"] };
        },
      ],
      [
        "a config file beside the workspace, named from it (another workspace has another beside it)",
        (fx) => {
          writeFileSync(path.join(fx.base, "shared.toml"), "# beside\n");
          return { args: ["--config=../shared.toml"] };
        },
      ],
      ["the config's folder named from the workspace", () => ({ env: { XDG_CONFIG_HOME: "../config" } })],
      [
        "the config's folder named from the workspace, its path holding a `=`",
        (fx) => {
          mkdirSync(path.join(fx.base, "cfg=1", "latch"), { recursive: true });
          writeFileSync(path.join(fx.base, "cfg=1", "latch", "agents.toml"), "# beside\n");
          return { env: { XDG_CONFIG_HOME: "../cfg=1" } };
        },
      ],
      // No config file there now: another workspace's start would look for one in A, not in its own root.
      [
        "the config's folder inside the workspace",
        (fx) => ({ args: ["--yes"], env: { XDG_CONFIG_HOME: path.join(fx.root, "cfg") } }),
      ],
      // An allowed dir that is the root itself: another workspace's tools would work there, not in it.
      ["an allowed dir", (fx) => ({ config: `[tools_policies.local_fs]\n_allowed_dir = "${fx.root}"\n` })],
      [
        "a skill folder relative to the root",
        () => ({ config: `[tools_policies.skills]\n_skill_dirs = "../shared"\n` }),
      ],
    ];
    for (const [what, make] of cases) {
      const { fx, env, exact, elsewhere } = setup();
      const made = make(fx);
      if (made.config) writeFileSync(path.join(fx.base, "config", "latch", "agents.toml"), made.config);
      const s = serve(["--root", ".", "--state-dir", fx.state, ...(made.args ?? [])], { ...env, ...made.env }, fx.root);
      await s.init();
      await s.request(2, "tools/list");
      assert.ok(await waitFor(() => existsSync(fx.state + "/mcp-answers") && exact().length === 1), `${what}: kept`);
      await stop(s);
      assert.deepEqual(elsewhere(), [], `${what}: none for a start elsewhere`);
    }
  });

  test("answers kept elsewhere that a start finds are not its own go, though that start keeps nothing", T, async () => {
    const { fx, env, elsewhere, plant } = setup();
    await stop((await start(fx, env)).s);
    plant("tools", elsewhere()[0]);
    const b = workspace(fx, "ws-b");
    // All three at once (as start() sends them): a tools/list sent after the reply came may reach the
    // program after the entry's handover (25 ms; CI met it on a loaded machine), which answers it.
    const { s, list } = await start(fx, env, [], b);
    assert.ok(describes(list, PLANTED), "the first tools/list came from the marked file");
    // Made once the entry answered, while the program loads (it checks after): this start keeps
    // nothing (a skill folder).
    mkdirSync(path.join(b, ".agents", "skills", "hello"), { recursive: true });
    writeFileSync(
      path.join(b, ".agents", "skills", "hello", "SKILL.md"),
      "---\nname: hello\ndescription: hi\n---\nhi\n",
    );
    assert.ok(await waitFor(() => listChanged(s)), "corrected");
    await stop(s);
    assert.deepEqual(elsewhere(), [], "the marked file is gone, not given again");
  });
});
