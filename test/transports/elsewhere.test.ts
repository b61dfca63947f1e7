// The pure parts of a start answered as the same start in another workspace (src/transports/mcp/elsewhere.ts):
// which argument is the root, what names a start but for its root, and which inputs can be read at another
// root. A wrong answer here gives a start another start's answers (the program would correct the tools,
// but not the instructions), so each way a start can differ is tried. answer-cache.test.ts has the starts.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { buildProgram } from "../../src/cli/program.js";
import { stateDirInside } from "../../src/transports/mcp/answer-cache.js";
import { mcpOptions, VALUE_OPTIONS } from "../../src/transports/mcp/mcp-args.js";
import {
  elsewhereMaterial,
  markedInputs,
  placesByRoot,
  rootArgument,
  type KeptInput,
} from "../../src/transports/mcp/elsewhere.js";
import { PLACE_ENV, ROOT_MARK, SHAPING_ENV } from "../../src/transports/mcp/plain-start.js";

const R = "/work/ws";

describe("a start but for its root", () => {
  test("the root's argument: one `--root DIR` or `--root=DIR` after `mcp`, else none", () => {
    assert.deepEqual(rootArgument(["mcp", "--root", R]), { at: 2, prefix: "", value: R });
    assert.deepEqual(rootArgument(["mcp", "--yes", "--root=.", "--config", "c.toml"]), {
      at: 2,
      prefix: "--root=",
      value: ".",
    });
    for (const args of [
      ["call", "--root", R],
      ["mcp"],
      ["mcp", "--root"],
      ["mcp", "--root="],
      ["mcp", "--root", "--yes"],
      ["mcp", "--root", R, "--root", "/other"],
      ["mcp", "--root=/a", "--root", "/b"],
      ["mcp", "--", "--root", R],
      // An option that takes a value takes the next argument, whatever it looks like: no root named.
      ["mcp", "--host", "--root", R],
      ["mcp", "--host", `--root=${R}`],
      ["mcp", "--root", R, "stray"],
    ])
      assert.equal(rootArgument(args), undefined, args.join(" "));
  });

  test("two starts alike but for their root (its value, the folder, a variable that is it) name the same", () => {
    const env = (root: string) => ({ HOME: "/home/u", PWD: root, OLDPWD: "/anywhere", LATCH_STATE_DIR: root });
    const at = (root: string, cwd: string) =>
      JSON.stringify(elsewhereMaterial(["mcp", "--root", root, "--yes"], env(root), cwd, root));
    assert.equal(at("/work/a", "/work/a"), at("/work/b", "/work/b"));
    assert.equal(at("/work/a", "/home/u"), at("/work/b", "/home/u"), "a folder that is not the root stays");
    assert.notEqual(at("/work/a", "/home/u"), at("/work/b", "/home/v"));
    const m = elsewhereMaterial(["mcp", "--root=.", "--yes"], { HOME: "/home/u" }, R, R) as unknown[];
    assert.deepEqual(m.slice(0, 3), ["elsewhere", ["mcp", `--root=${ROOT_MARK}`, "--yes"], ROOT_MARK]);
  });

  test("another argument, a variable that shapes the answers, or another place: another name", () => {
    const base = JSON.stringify(elsewhereMaterial(["mcp", "--root", R], {}, "/", R));
    assert.notEqual(JSON.stringify(elsewhereMaterial(["mcp", "--root", R, "--yes"], {}, "/", R)), base);
    for (const name of [...SHAPING_ENV, ...PLACE_ENV])
      assert.notEqual(JSON.stringify(elsewhereMaterial(["mcp", "--root", R], { [name]: "" }, "/", R)), base, name);
    // A variable latch does not read (plain-start.ts lists each one it does) does not shape its answers.
    assert.equal(JSON.stringify(elsewhereMaterial(["mcp", "--root", R], { OLDPWD: "/x", TERM: "y" }, "/", R)), base);
  });

  test("none for `/`, or for a start whose other arguments name its workspace", () => {
    assert.equal(elsewhereMaterial(["mcp", "--root", "/"], {}, "/", "/"), undefined);
    assert.equal(elsewhereMaterial(["mcp", "--root", R, "--state-dir", `${R}/.state`], {}, "/", R), undefined);
    assert.equal(
      elsewhereMaterial(["mcp", "--root", "link", "--config", "/real/ws/c.toml"], {}, "/w", "/real/ws"),
      undefined,
    );
  });
});

describe("a start in its root, with relative paths", () => {
  const at = (args: string[], env: Record<string, string> = {}, cwd = R) =>
    elsewhereMaterial(["mcp", "--root", ".", ...args], env, cwd, R);

  test("one that leads out of the root names a place another workspace has elsewhere: none", () => {
    for (const args of [
      ["--config", "../c.toml"],
      ["--config=../c.toml"],
      ["--policy", "../../p.mjs"],
      ["--state-dir", ".."],
    ])
      assert.equal(at(args), undefined, args.join(" "));
    for (const name of ["LATCH_CONFIG", "XDG_CONFIG_HOME", "HOME"])
      assert.equal(at([], { [name]: "../cfg" }), undefined, name);
    // A path may hold a `=`: the value is looked at whole too, not only after its first `=`.
    assert.equal(at(["--config", "../c=1.toml"]), undefined);
    assert.equal(at(["--config=../c=1.toml"]), undefined);
    assert.equal(at([], { XDG_CONFIG_HOME: "../cfg=1" }), undefined);
    assert.equal(at([], { LATCH_CONFIG: "../a=b.toml" }), undefined);
  });

  test("one that stays inside it (markedInputs judges the place), or a start elsewhere: a name", () => {
    assert.notEqual(at(["--config", "sub/c.toml", "--agent", "x"]), undefined);
    assert.notEqual(at([], { XDG_CONFIG_HOME: "cfg" }), undefined);
    // Started in another folder, that folder is in the name: the path leads to the same place.
    assert.notEqual(elsewhereMaterial(["mcp", "--root", R, "--config", "../c.toml"], {}, "/home/u", R), undefined);
  });
});

describe("settings that place something by the root", () => {
  const settings = (allowedDir: string | undefined, skillDirs: string[]) => ({
    local_fs: { allowedDir },
    skills: { skillDirs },
  });
  test("an allowed dir (relative or not), a skill folder relative to the root; not an absolute skill folder", () => {
    assert.equal(placesByRoot(settings(undefined, [])), false);
    assert.equal(placesByRoot(settings("sub", [])), true);
    assert.equal(placesByRoot(settings(R, [])), true);
    assert.equal(placesByRoot(settings(undefined, ["/opt/skills"])), false);
    assert.equal(placesByRoot(settings(undefined, ["/opt/skills", "../shared"])), true);
  });
});

describe("the inputs at another root", () => {
  const inputs: KeptInput[] = [
    ["/home/u/.config/latch/agents.toml", "text", "sha256:abc"],
    [R, "identity", "1:2"],
    ["/links/ws", "identity", "1:2"],
    [`${R}/.agents/skills`, "identity", "absent"],
    ["/home/u/.config/latch/skills", "identity", "absent"],
  ];

  test("the root drops out, as given and canonical; an absent place inside it is marked; the rest stay", () => {
    assert.deepEqual(markedInputs(inputs, R, "/links/ws"), [
      ["/home/u/.config/latch/agents.toml", "text", "sha256:abc"],
      [`${ROOT_MARK}/.agents/skills`, "identity", "absent"],
      ["/home/u/.config/latch/skills", "identity", "absent"],
    ]);
  });

  test("any other place inside the workspace, there or not: none (another start looks for it here, not in its root)", () => {
    // A config folder or a skill folder a variable or setting names inside this workspace, absent now.
    assert.equal(markedInputs([...inputs, [`${R}/cfg/latch/agents.toml`, "text", "absent"]], R, R), undefined);
    assert.equal(markedInputs([...inputs, [`${R}/my-skills`, "identity", "absent"]], R, R), undefined);
    assert.equal(markedInputs([...inputs, [`${R}/.agents/skills/x`, "identity", "absent"]], R, R), undefined);
  });

  test("a place named relative to the folder a start is in: none", () => {
    assert.equal(markedInputs([...inputs, [".config/latch/agents.toml", "text", "absent"]], R, R), undefined);
  });

  test("a file or folder inside the workspace that is there: none (another workspace has its own)", () => {
    assert.equal(markedInputs([...inputs, [`${R}/agents.toml`, "text", "sha256:def"]], R, R), undefined);
    assert.equal(markedInputs([...inputs, [`${R}/sub`, "identity", "3:4"]], R, R), undefined);
    // A sibling whose name begins with the root's is not inside it.
    assert.deepEqual(markedInputs([[`${R}-other/x`, "content", "5"]], R, R), [[`${R}-other/x`, "content", "5"]]);
  });
});

describe("a state dir in the workspace", () => {
  test("is found by name and by real path, through a link either way; a sibling is not in it", () => {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "latch-state-in-")));
    try {
      const root = path.join(base, "ws");
      mkdirSync(path.join(root, "st"), { recursive: true });
      const link = path.join(base, "link");
      symlinkSync(root, link);
      assert.equal(stateDirInside(path.join(root, "st"), [root]), true);
      assert.equal(stateDirInside(root, [root]), true, "the workspace itself");
      assert.equal(stateDirInside(path.join(link, "st"), [root]), true, "a link to it: by real path");
      assert.equal(stateDirInside(path.join(link, "not-yet"), [link]), true, "not made yet: by name");
      assert.equal(stateDirInside(path.join(root, "st"), [link]), true, "the workspace named through a link");
      assert.equal(stateDirInside(path.join(base, "ws-state"), [root]), false, "a sibling");
      assert.equal(stateDirInside(path.join(base, "state"), [root]), false);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe("latch mcp's arguments as commander reads them", () => {
  test("the options that take a value are the program's own, each with a required value", () => {
    const mcp = buildProgram().commands.find((c) => c.name() === "mcp");
    assert.ok(mcp);
    const taking = mcp.options.filter((o) => o.required || o.optional);
    assert.deepEqual(
      taking.filter((o) => o.optional).map((o) => o.long),
      [],
      "an optional value is read otherwise",
    );
    assert.deepEqual(taking.map((o) => o.long).sort(), [...VALUE_OPTIONS].sort());
  });

  test("an option's value is the next argument, or after its `=`; a flag with a value is not certain", () => {
    assert.deepEqual(mcpOptions(["mcp", "--host", "--state-dir=/x", "--yes"]), [
      { name: "--host", value: "--state-dir=/x", at: 2, prefix: "" },
      { name: "--yes" },
    ]);
    assert.deepEqual(
      mcpOptions(["mcp", "--state-dir=/a", "--state-dir", "/b"])?.map((o) => o.value),
      ["/a", "/b"],
    );
    for (const args of [["call"], ["mcp", "--yes=1"], ["mcp", "--config"], ["mcp", "x"], ["mcp", "--"]])
      assert.equal(mcpOptions(args), undefined, args.join(" "));
  });
});
