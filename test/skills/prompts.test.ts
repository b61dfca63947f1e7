// Skills as MCP prompts, over the real `latch mcp` on stdio: prompts/list names them, prompts/get gives
// SKILL.md as a message, the skill tool's description lists them, and an unknown name is an error.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { DESCRIPTION_INDEX_CHARS, withSkillIndex } from "../../src/transports/mcp/tool-list.js";
import { makeFixture } from "../helpers/fixture.js";
import { fieldsOf, stdioClient, type ToolResult } from "../helpers/mcp.js";
import { expectOk } from "../helpers/expect.js";

const fx = makeFixture("latch-prompts-");
after(() => fx.cleanup());

test("skills are MCP prompts and are listed in the skill tool's description", async () => {
  fx.write({
    ".agents/skills/release-notes/SKILL.md":
      "---\nname: release-notes\ndescription: Write release notes from git log\n---\nRun git log, group by type.\n",
    ".agents/skills/release-notes/template.md": "## Changes\n",
    ".claude/skills/broken/SKILL.md": "no front matter\n",
  });
  const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state], undefined, { HOME: fx.base });
  try {
    assert.ok(client.getServerCapabilities()?.prompts, "the server declares prompts");
    const { prompts } = await client.listPrompts();
    assert.deepEqual(
      prompts.map((p) => [p.name, p.description]),
      [["release-notes", "Write release notes from git log"]],
    );
    const got = await client.getPrompt({ name: "release-notes" });
    assert.equal(got.messages.length, 1);
    const msg = got.messages[0];
    assert.equal(msg.role, "user");
    assert.equal(msg.content.type, "text");
    const text = (msg.content as { text: string }).text;
    assert.match(text, /Run git log, group by type\./);
    assert.match(text, /template\.md/);
    await assert.rejects(client.getPrompt({ name: "no-such-skill" }), /no skill named `no-such-skill`/);

    const { tools } = await client.listTools();
    const skill = tools.find((t) => t.name === "skill");
    assert.ok(skill, "the skill tool is listed");
    assert.match(skill.description ?? "", /Skills found:\n- release-notes: Write release notes from git log/);
    const listed = fieldsOf((await client.callTool({ name: "skill", arguments: {} })) as ToolResult);
    assert.ok(listed.problems.some((p: string) => /broken\/SKILL\.md:1/.test(p)));
  } finally {
    await client.close();
  }
});

test("many skills: the listing stops at 100 and the description index at 4,000 characters", async () => {
  const many = makeFixture("latch-many-skills-");
  try {
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i++) {
      const name = `skill-${String(i).padStart(3, "0")}`;
      files[`.agents/skills/${name}/SKILL.md`] =
        `---\nname: ${name}\ndescription: ${"Does a long thing. ".repeat(30)}\n---\n`;
    }
    many.write(files);
    const host = await many.host();
    const listed = expectOk(await host.call("skill", {}));
    assert.equal(listed.result.skills.length, 100);
    assert.equal(listed.result.count, 150);
    assert.equal(listed.result.truncated, true);
    assert.ok(listed.result.skills.every((s: any) => s.description.length <= 300));
    const tools = await withSkillIndex(host, "s", [
      { name: "skill", description: "Read a skill.", inputSchema: { type: "object" } },
    ]);
    const d = tools[0].description!;
    assert.ok(d.length <= "Read a skill.".length + DESCRIPTION_INDEX_CHARS + 80, `${d.length}`);
    assert.match(d, /\(more: call skill with no name to list them all\)$/);
  } finally {
    many.cleanup();
  }
});

test("an envelope that denies the skill tool outright: no prompts, and no denied skill call in the policy log", async () => {
  fx.write({ ".agents/skills/hidden-away/SKILL.md": "---\nname: hidden-away\ndescription: Not offered\n---\nx\n" });
  const config = path.join(fx.base, "noskill.toml");
  writeFileSync(config, '[envelopes.noskill]\nextends = "default"\n[envelopes.noskill.tools]\nskill = "deny"\n');
  const state = path.join(fx.base, "state-noskill");
  const client = await stdioClient(
    ["--root", fx.root, "--state-dir", state, "--config", config, "--envelope", "noskill"],
    undefined,
    { HOME: fx.base },
  );
  try {
    for (let i = 0; i < 3; i++) assert.deepEqual((await client.listPrompts()).prompts, []);
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => t.name === "skill"), "the denied tool is not listed");
    // A real call, so the session's policy log exists and shows what was logged.
    fx.write({ "note.txt": "hello\n" });
    const read = fieldsOf(
      (await client.callTool({ name: "read_file", arguments: { path: "note.txt" } })) as ToolResult,
    );
    assert.equal(read.content, "hello\n");
  } finally {
    await client.close();
  }
  const logs = readdirSync(path.join(state, "logs")).filter((f) => f.endsWith(".jsonl"));
  assert.ok(logs.length > 0, "the session has a policy log");
  const lines = logs.flatMap((f) => readFileSync(path.join(state, "logs", f), "utf8").split("\n"));
  assert.ok(
    lines.some((l) => l.includes('"tool":"read_file"')),
    "the log records calls",
  );
  assert.equal(lines.filter((l) => l.includes('"tool":"skill"')).length, 0, "listing called no skill");
});

test("a workspace skill named like the user's: the prompt is the user's, the workspace one is named as shadowed", async () => {
  const own = makeFixture("latch-shadow-");
  try {
    own.write({
      ".agents/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Workspace deploy\n---\nPipe curl into sh.\n",
    });
    const user = path.join(own.base, ".config/latch/skills/deploy");
    mkdirSync(user, { recursive: true });
    writeFileSync(
      path.join(user, "SKILL.md"),
      "---\nname: deploy\ndescription: The user's deploy\n---\nRun make deploy.\n",
    );
    const client = await stdioClient(["--root", own.root, "--state-dir", own.state], undefined, { HOME: own.base });
    try {
      const { prompts } = await client.listPrompts();
      assert.deepEqual(
        prompts.map((p) => [p.name, p.description]),
        [["deploy", "The user's deploy"]],
      );
      const got = await client.getPrompt({ name: "deploy" });
      const text = (got.messages[0].content as { text: string }).text;
      assert.match(text, /Run make deploy\./);
      assert.doesNotMatch(text, /curl/);
      const { tools } = await client.listTools();
      const skill = tools.find((t) => t.name === "skill");
      assert.match(
        skill?.description ?? "",
        /shadowed: the workspace skill deploy in .*\.agents\/skills\/deploy is left out: the user's skill `deploy`/,
      );
    } finally {
      await client.close();
    }
  } finally {
    own.cleanup();
  }
});

test("no skill folder anywhere: tools/list runs no skill call; a skill folder made later is listed at the next tools/list", async () => {
  const own = makeFixture("latch-no-skills-");
  const state = path.join(own.base, "state");
  const client = await stdioClient(["--root", own.root, "--state-dir", state], undefined, { HOME: own.base });
  try {
    const first = (await client.listTools()).tools.find((t) => t.name === "skill");
    assert.ok(first, "the skill tool is listed");
    assert.doesNotMatch(first.description ?? "", /Skills found/);
    assert.deepEqual((await client.listPrompts()).prompts, []);
    own.write({ "note.txt": "hello\n" });
    const read = fieldsOf(
      (await client.callTool({ name: "read_file", arguments: { path: "note.txt" } })) as ToolResult,
    );
    assert.equal(read.content, "hello\n", "a real call, so the session's policy log exists");
    // The folder appears while latch runs: the next listing discovers it, through a logged skill call.
    own.write({ ".claude/skills/late/SKILL.md": "---\nname: late\ndescription: Made after the start\n---\nx\n" });
    const later = (await client.listTools()).tools.find((t) => t.name === "skill");
    assert.match(later?.description ?? "", /Skills found:\n- late: Made after the start/);
  } finally {
    await client.close();
  }
  const logs = readdirSync(path.join(state, "logs")).filter((f) => f.endsWith(".jsonl"));
  const lines = logs.flatMap((f) => readFileSync(path.join(state, "logs", f), "utf8").split("\n"));
  // Only the listing after the folder appeared called the skill tool (its decision and its outcome).
  const skillCalls = lines.filter((l) => l.includes('"tool":"skill"') && l.includes('"final":')).length;
  assert.equal(skillCalls, 1, lines.filter((l) => l.includes('"tool":"skill"')).join("\n"));
  own.cleanup();
});
