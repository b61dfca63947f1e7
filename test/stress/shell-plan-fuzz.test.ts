// Random lines built from shell metacharacters and words: the planner either refuses with a Refusal
// or plans steps whose every command is a literal, allowlisted program — it never crashes and never
// lets a metacharacter through as syntax.
import assert from "node:assert/strict";
import path from "node:path";
import { after, test } from "node:test";
import fc from "fast-check";
import { Refusal } from "../../src/errors.js";
import { makeShellFixture } from "../shell/shell-fixture.js";

const fx = makeShellFixture();
after(() => fx.cleanup());
const ALLOWED = ["ls", "cat", "echo", "env", "sh", "find", "xargs", "git"];
const POLICY = { _allowed_commands: ALLOWED.join(","), _denied_commands: "rm" };

const token = fc.constantFrom(
  "ls",
  "cat",
  "echo",
  "env",
  "sh",
  "-c",
  "rm",
  "find",
  "-exec",
  "xargs",
  "git",
  "a.txt",
  ".env",
  "..",
  "/",
  "src",
  " ",
  " ",
  "\t",
  "\n",
  ";",
  "&&",
  "||",
  "|",
  "&",
  "!",
  ">",
  "<",
  "<<",
  "'",
  '"',
  "\\",
  "$",
  "$(",
  ")",
  "(",
  "`",
  "{",
  "}",
  "*",
  "?",
  "[",
  "]",
  "~",
  "#",
  "=",
  "X=1",
  "'rm'",
  "r''m",
  "'*'",
  "';'",
  "'{}'",
  "\r",
  "\u00a0",
  "ｌｓ",
  "cd",
  "-",
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
        assert.ok(
          !innerPlaceholder && (ALLOWED.includes(name) || name === "echo"),
          `${JSON.stringify(l)} runs ${argv[0]}`,
        );
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

// The same property with an oracle: a line of allowlisted commands, plain words and list operators
// is planned; the same line with one refused construct put in anywhere is refused, every time.
const simple = fc
  .tuple(
    fc.constantFrom("ls", "cat", "echo", "git"),
    fc.array(fc.constantFrom("a.txt", "src", "-l", "hello", "'*.ts'", '"x y"', "--", "log"), { maxLength: 3 }),
  )
  .map(([c, a]) => [c, ...a]);
const joiner = fc.constantFrom(" && ", " || ", " ; ", "\n");
const safeLine = fc.tuple(
  fc.array(simple, { minLength: 1, maxLength: 4 }),
  fc.array(joiner, { minLength: 3, maxLength: 3 }),
);
type Cmds = string[][];
/** Refused constructs, each as a change of one command (by index) or of the joiners. */
const ARG_CONSTRUCTS = [
  "*.ts",
  "a?",
  "[ab].txt",
  "$HOME",
  "${HOME}",
  "$(ls)",
  "`ls`",
  "$((1+1))",
  "a\\ b",
  "\\$x",
  "~",
  "~/x",
  "{a,b}",
  "> out.txt",
  ">> out.txt",
  "< a.txt",
  "2>&1",
  "2> /dev/null",
  "<<EOF\nx\nEOF",
  "&",
];
const WRAPS: ((c: string) => string)[] = [
  (c) => `! ${c}`,
  (c) => `X=1 ${c}`,
  (c) => `( ${c} )`,
  (c) => `{ ${c}; }`,
  (c) => `if ${c}; then echo; fi`,
  (c) => `for x in a; do ${c}; done`,
  (c) => `while ${c}; do echo; done`,
  (c) => `case a in a) ${c};; esac`,
  (c) => `${c} | cat`,
  (c) => `cat <(${c})`,
];
const construct = fc.oneof(
  fc.tuple(fc.constantFrom(...ARG_CONSTRUCTS), fc.nat()).map(([k, at]) => ({
    what: k,
    apply: (cmds: Cmds) => cmds.map((c, i) => (i === at % cmds.length ? [...c, k] : c)),
  })),
  fc.tuple(fc.nat(WRAPS.length - 1), fc.nat()).map(([w, at]) => ({
    what: WRAPS[w]("CMD"),
    wrap: (cmd: string, i: number, n: number) => (i === at % n ? WRAPS[w](cmd) : cmd),
  })),
);

function render(cmds: Cmds, joiners: string[], wrap?: (cmd: string, i: number, n: number) => string): string {
  return cmds
    .map((c, i) => (wrap ? wrap(c.join(" "), i, cmds.length) : c.join(" ")))
    .reduce((acc, c, i) => (i === 0 ? c : acc + joiners[(i - 1) % joiners.length] + c), "");
}

test("lines of allowed commands are planned; one refused construct anywhere makes them refused", async () => {
  let refusals = 0;
  await fc.assert(
    fc.asyncProperty(safeLine, construct, async ([cmds, joiners], c) => {
      const base = render(cmds, joiners);
      const plan = await fx.plan(base, POLICY); // a Refusal here fails the property: the oracle's baseline is allowed
      assert.ok(plan.steps.length >= cmds.length, `${JSON.stringify(base)} planned ${plan.steps.length} steps`);
      const bad = "apply" in c ? render(c.apply(cmds), joiners) : render(cmds, joiners, c.wrap);
      await assert.rejects(
        fx.plan(bad, POLICY),
        (err) => err instanceof Refusal,
        `${JSON.stringify(bad)} (with ${JSON.stringify(c.what)}) was not refused`,
      );
      refusals++;
    }),
    { numRuns: 400, seed: 777 },
  );
  assert.equal(refusals, 400);
});
