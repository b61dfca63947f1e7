// Random lines built from shell metacharacters and words: the planner either refuses with a Refusal
// or plans steps whose every command is a literal, allowlisted program — it never crashes and never
// lets a metacharacter through as syntax.
import assert from "node:assert/strict";
import path from "node:path";
import { after, test } from "node:test";
import fc from "fast-check";
import { Refusal } from "../../src/errors.js";
import { makeShellFixture } from "./shell-fixture.js";

const fx = makeShellFixture();
after(() => fx.cleanup());
const ALLOWED = ["ls", "cat", "echo", "env", "sh", "find", "xargs", "git"];
const POLICY = { _allowed_commands: ALLOWED.join(","), _denied_commands: "rm" };

const token = fc.constantFrom(
  "ls", "cat", "echo", "env", "sh", "-c", "rm", "find", "-exec", "xargs", "git", "a.txt", ".env", "..", "/", "src",
  " ", " ", "\t", "\n", ";", "&&", "||", "|", "&", "!", ">", "<", "<<", "'", '"', "\\", "$", "$(", ")", "(", "`", "{", "}",
  "*", "?", "[", "]", "~", "#", "=", "X=1", "'rm'", "r''m", "'*'", "';'", "'{}'", "\r", "\u00a0", "ｌｓ", "cd", "-",
);
const line = fc.array(token, { minLength: 1, maxLength: 12 }).map((ts) => ts.join(""));

test("random lines: a Refusal, or literal allowlisted commands only", async () => {
  await fc.assert(
    fc.asyncProperty(line, async (l) => {
      let plan;
      try {
        plan = await fx.plan(l, POLICY);
      } catch (err) {
        assert.ok(err instanceof Refusal, `not a Refusal for ${JSON.stringify(l)}: ${String(err)}`);
        return;
      }
      for (const argv of plan.commands) {
        const name = path.basename(argv[0]);
        const innerPlaceholder = argv[0] === "{}";
        assert.ok(!innerPlaceholder && (ALLOWED.includes(name) || name === "echo"), `${JSON.stringify(l)} runs ${argv[0]}`);
        assert.notEqual(name, "rm");
      }
      for (const s of plan.steps) {
        assert.ok(s.program === "cd" || path.isAbsolute(s.program));
        assert.ok(!s.argv.some((w) => w.includes("\r")), `CR passed in ${JSON.stringify(l)}`);
      }
    }),
    { numRuns: 250, seed: 4242 },
  );
});
