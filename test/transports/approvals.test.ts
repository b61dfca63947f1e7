// Approvals a person can give, through the built `latch mcp` and the SDK's client: an explicit choice
// with no default, a client's `cancel` told apart from a person's decline, the fallback to the queue
// (`latch approvals` from a terminal) with a bounded wait, no notifications/cancelled for an answered
// request, approvals for the rest of the session within a scope (in the policy log), and requests
// that name their risk.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { CancelledNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import {
  connectOver,
  httpClient,
  modelView,
  startHttpServer,
  stdioClient,
  TRANSPORTS,
  type ElicitAnswer,
  type ElicitReply,
  type ToolResult,
  type Transport,
} from "../helpers/mcp.js";
import { shq } from "../helpers/quote.js";

const fx = makeFixture();
after(() => fx.cleanup());
let n = 0;

/** A client that offers no elicitation. */
async function withoutPerson(extra: string[] = []) {
  const log = path.join(fx.base, `policy-${++n}.log`);
  const client = await stdioClient([
    "--root",
    fx.root,
    "--state-dir",
    fx.state,
    "--envelope",
    "default",
    "--policy-log",
    log,
    ...extra,
  ]);
  return { client, log };
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolResult;

/** A client whose person answers with `answer`; every form it is shown is kept. */
async function withPerson(answer: ElicitAnswer, extra: string[] = [], transport: Transport = "stdio") {
  const forms: Record<string, any>[] = [];
  const log = path.join(fx.base, `policy-${++n}.log`);
  const { client, close } = await connectOver(
    transport,
    ["--root", fx.root, "--state-dir", fx.state, "--envelope", "default", "--policy-log", log, ...extra],
    {
      answer: (m, params) => {
        forms.push(params);
        return answer(m, params);
      },
    },
  );
  const cancelled: unknown[] = [];
  client.setNotificationHandler(CancelledNotificationSchema, async (note) => void cancelled.push(note.params));
  return { client, close, log, forms, cancelled };
}

test("the form asks an explicit choice with no default; an answered request gets no notifications/cancelled", async () => {
  fx.write({ "a.txt": "one\n" });
  const { client, forms, cancelled } = await withPerson(() => ({
    action: "accept",
    content: { decision: "allow_once" },
  }));
  try {
    await call(client, "read_file", { path: "a.txt" });
    const r = await call(client, "edit_file", { path: "a.txt", old_string: "one", new_string: "two" });
    assert.equal(r.isError, undefined, modelView(r));
    assert.equal(readFileSync(path.join(fx.root, "a.txt"), "utf8"), "two\n");
    const schema = forms[0].requestedSchema;
    assert.deepEqual(schema.required, ["decision"]);
    assert.deepEqual(schema.properties.decision.enum, ["allow_once", "allow_session", "deny"]);
    assert.doesNotMatch(JSON.stringify(schema), /"default"/, "no default that could mean no (or yes)");
    assert.match(forms[0].message, /Risk: writes files/);
    assert.deepEqual(cancelled, [], "the answered elicitation was not cancelled afterwards");
  } finally {
    await client.close();
  }
});

test("an accept without a choice is not a yes; a client's cancel, or a decline faster than reading, is not a person's no", async () => {
  fx.write({ "b.txt": "one\n" });
  const slowly = (reply: ElicitReply) => () => new Promise<ElicitReply>((r) => setTimeout(() => r(reply), 1100));
  const last = slowly({ action: "decline" });
  for (const [answer, expected] of [
    [() => ({ action: "accept" }) as const, /accepted the form without a choice/],
    [
      () => ({ action: "cancel" }) as const,
      /answered `cancel`: the prompt was dismissed, or the client does not show approval/,
    ],
    // `codex exec` answers decline within milliseconds, nobody asked.
    [() => ({ action: "decline" }) as const, /declined within \d+ ms, before a person could have read the request/],
    [last, /the person declined it/],
  ] as const) {
    const { client } = await withPerson(answer, ["--approval-wait", "0"]);
    try {
      await call(client, "read_file", { path: "b.txt", force: true });
      const r = await call(client, "edit_file", { path: "b.txt", old_string: "one", new_string: "two" });
      assert.equal(r.isError, true);
      assert.match(modelView(r), expected);
      if (answer !== last) assert.doesNotMatch(modelView(r), /person (answered|declined)/);
      assert.match(modelView(r), /latch approvals/, "the hint names what a person can do");
      if (expected.source.includes("declined within"))
        assert.match(modelView(r), /the call did not wait: with latch mcp --approval-wait/, "and says it did not wait");
      assert.equal(readFileSync(path.join(fx.root, "b.txt"), "utf8"), "one\n");
    } finally {
      await client.close();
    }
  }
});

test("a cancelled prompt falls back to the queue: `latch approvals approve ID` from a terminal lets it run", async () => {
  fx.write({ "c.txt": "one\n" });
  const { client, log } = await withPerson(() => ({ action: "cancel" }), ["--approval-wait", "60"]);
  try {
    await call(client, "read_file", { path: "c.txt" });
    const pending = call(client, "edit_file", { path: "c.txt", old_string: "one", new_string: "two" });
    const id = await waitForQueued();
    const shown = await runCli(["approvals", "show", id, "--state-dir", fx.state]);
    assert.match(shown.stdout, /edit_file/);
    assert.match(shown.stdout, /risk: writes files/);
    const ok = await runCli(["approvals", "approve", id, "--state-dir", fx.state]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const r = await pending;
    assert.equal(r.isError, undefined, modelView(r));
    assert.equal(readFileSync(path.join(fx.root, "c.txt"), "utf8"), "two\n");
    assert.match(readFileSync(log, "utf8"), new RegExp(`approved by latch approvals approve ${id} \\(once\\)`));
  } finally {
    await client.close();
  }
});

test("a client without elicitation: the queue wait is bounded, and the refusal says so", async () => {
  fx.write({ "d.txt": "one\n" });
  const { client, log } = await withoutPerson(["--approval-wait", "1"]);
  try {
    await call(client, "read_file", { path: "d.txt" });
    const r = await call(client, "edit_file", { path: "d.txt", old_string: "one", new_string: "two" });
    assert.equal(r.isError, true);
    assert.match(
      modelView(r),
      /cannot ask a person \(it offers no elicitation\), and nobody answered `latch approvals approve \w+` within 1 s/,
    );
    assert.equal(readFileSync(path.join(fx.root, "d.txt"), "utf8"), "one\n");
    const left = await runCli(["approvals", "list", "--json", "--state-dir", fx.state]);
    assert.deepEqual(left.json, [], "the timed-out request left the queue");
    assert.match(readFileSync(log, "utf8"), /"final":"deny"/);
  } finally {
    await client.close();
  }
});

test("allow for this session covers the same program, and only it; the scope is in the policy log", async () => {
  let asked = 0;
  const { client, log, forms } = await withPerson(() => {
    asked++;
    return { action: "accept", content: { decision: "allow_session" } };
  });
  try {
    assert.equal((await call(client, "local_shell", { command: "touch s1.txt" })).isError, undefined);
    assert.equal((await call(client, "local_shell", { command: "touch s2.txt" })).isError, undefined);
    assert.equal(asked, 1, "the second touch was covered by the session grant");
    assert.ok(existsSync(path.join(fx.root, "s2.txt")));
    assert.equal((await call(client, "local_shell", { command: "mkdir s3" })).isError, undefined);
    assert.equal(asked, 2, "another program is asked again");
    assert.match(forms[0].requestedSchema.properties.decision.enumNames[1], /touch/);
    const text = readFileSync(log, "utf8");
    assert.match(text, /approved by the person, in the MCP client \(for this session: touch\)/);
    assert.match(text, /approved by an approval given earlier in this session \(for this session: touch\)/);
  } finally {
    await client.close();
  }
});

test("a session grant for `git --no-pager log` does not cover `git -c core.pager=evil log`", async () => {
  const marker = path.join(fx.base, "pager-ran");
  // The first form is answered "for this session", any later one "deny"; strict asks for every command.
  const { client, close, log, forms } = await withPerson(
    () => ({ action: "accept", content: { decision: forms.length === 1 ? "allow_session" : "deny" } }),
    ["--envelope", "strict"],
  );
  try {
    await call(client, "local_shell", { command: "git --no-pager log" });
    assert.equal(forms.length, 1);
    assert.match(forms[0].requestedSchema.properties.decision.enumNames[1], /git --no-pager log/);
    await call(client, "local_shell", { command: "git --no-pager log -n 1" });
    assert.equal(forms.length, 1, "the same program, options and subcommand are covered");
    const evil = await call(client, "local_shell", { command: `git -c core.pager='touch ${marker}' log` });
    assert.equal(forms.length, 2, "an option that changes what runs is asked again");
    assert.equal(evil.isError, true);
    assert.equal(existsSync(marker), false, "the pager never ran");
    assert.doesNotMatch(readFileSync(log, "utf8"), /approval given earlier in this session \(for this session: git -c/);
  } finally {
    await close();
  }
});

for (const transport of TRANSPORTS) {
  test(`${transport}: allow for this session on a write covers the same file, and only it; the scope is in the policy log`, async () => {
    const [mine, other] = [`w1-${transport}.txt`, `w2-${transport}.txt`];
    fx.write({ [mine]: "one\n", [other]: "one\n" });
    // The first form is answered "for this session", any later one "deny".
    const { client, close, log, forms } = await withPerson(
      () => ({ action: "accept", content: { decision: forms.length === 1 ? "allow_session" : "deny" } }),
      [],
      transport,
    );
    try {
      await call(client, "read_file", { path: mine });
      const first = await call(client, "edit_file", { path: mine, old_string: "one", new_string: "two" });
      assert.equal(first.isError, undefined, modelView(first));
      assert.equal(
        forms[0].requestedSchema.properties.decision.enumNames[1],
        `Allow for this session (writes to ${mine})`,
      );
      const again = await call(client, "edit_file", { path: mine, old_string: "two", new_string: "three" });
      assert.equal(again.isError, undefined, modelView(again));
      assert.equal(forms.length, 1, "the same file is covered by the session grant");
      assert.equal(readFileSync(path.join(fx.root, mine), "utf8"), "three\n");
      await call(client, "read_file", { path: other });
      const elsewhere = await call(client, "edit_file", { path: other, old_string: "one", new_string: "two" });
      assert.equal(forms.length, 2, "another file is asked again");
      assert.equal(elsewhere.isError, true);
      assert.match(modelView(elsewhere), /the person chose deny/);
      assert.equal(readFileSync(path.join(fx.root, other), "utf8"), "one\n");
      const text = readFileSync(log, "utf8");
      const scope = `\\(for this session: writes to ${mine.replace(".", "\\.")}\\)`;
      assert.match(text, new RegExp(`approved by the person, in the MCP client ${scope}`));
      assert.match(text, new RegExp(`approved by an approval given earlier in this session ${scope}`));
      assert.doesNotMatch(text, /for this session: writes to w2/);
    } finally {
      await close();
    }
  });

  test(`${transport}: requests name "outside the workspace" and "privilege" and are offered once only; sudo never asks`, async () => {
    const outside = path.join(fx.base, "outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(outside, "o.txt"), "o\n");
    const config = path.join(fx.base, "allowed-paths.toml");
    writeFileSync(config, `[tools_policies.local_shell]\n_allowed_paths = "${outside}"\n`);
    const { client, close, forms } = await withPerson(
      () => ({ action: "accept", content: { decision: "deny" } }),
      ["--config", config],
      transport,
    );
    try {
      const copy = `from-outside-${transport}.txt`;
      const cp = await call(client, "local_shell", { command: `cp ${shq(path.join(outside, "o.txt"))} ${shq(copy)}` });
      assert.equal(cp.isError, true);
      assert.match(modelView(cp), /the person chose deny/);
      assert.match(forms[0].message, /^Risk: may write files, outside the workspace$/m);
      assert.deepEqual(forms[0].requestedSchema.properties.decision.enum, ["allow_once", "deny"]);
      assert.equal(existsSync(path.join(fx.root, copy)), false, "nothing ran");
      const mount = await call(client, "local_shell", { command: "mount" });
      assert.equal(mount.isError, true);
      assert.match(modelView(mount), /the person chose deny/);
      assert.match(forms[1].message, /^Risk: may write files, network, privilege$/m);
      assert.deepEqual(forms[1].requestedSchema.properties.decision.enum, ["allow_once", "deny"]);
      // sudo does not reach a person: every built-in envelope refuses it outright.
      const sudo = await call(client, "local_shell", { command: "sudo ls" });
      assert.equal(sudo.isError, true);
      assert.match(modelView(sudo), /shell\.blacklist "sudo"/);
      assert.equal(forms.length, 2, "sudo was refused without a question");
    } finally {
      await close();
    }
  });
}

test("rm -rf names its risks and offers no session-wide approval; npm test --help does not look like it", async () => {
  const victim = path.join(fx.root, "victim");
  mkdirSync(victim, { recursive: true });
  const { client, forms } = await withPerson(() => ({ action: "accept", content: { decision: "deny" } }));
  try {
    const r = await call(client, "local_shell", { command: "rm -rf victim" });
    assert.equal(r.isError, true);
    assert.match(modelView(r), /the person chose deny/);
    assert.match(forms[0].message, /Risk: may write files, deletes recursively$/m);
    assert.deepEqual(forms[0].requestedSchema.properties.decision.enum, ["allow_once", "deny"]);
    assert.ok(existsSync(victim), "nothing ran");
    // contained, `npm test` runs without a question: `cp` still asks, and writes only the workspace
    await call(client, "local_shell", { command: "cp a.txt b.txt" });
    assert.match(forms[1].message, /Risk: may write files$/m);
    assert.doesNotMatch(forms[1].message, /deletes|outside the workspace|privilege/);
  } finally {
    await client.close();
  }
});

test("over HTTP, `latch approvals approve ID --for-session` grants the session", async () => {
  const server = await startHttpServer([
    "--root",
    fx.root,
    "--state-dir",
    fx.state,
    "--envelope",
    "default",
    "--approval-wait",
    "60",
  ]);
  const client = await httpClient(server);
  try {
    const first = call(client, "local_shell", { command: "touch h1.txt" });
    const id = await waitForQueued();
    const ok = await runCli(["approvals", "approve", id, "--for-session", "--state-dir", fx.state]);
    assert.match(ok.stdout, /for this session: touch/);
    assert.equal((await first).isError, undefined);
    const second = await call(client, "local_shell", { command: "touch h2.txt" });
    assert.equal(second.isError, undefined, modelView(second));
    assert.ok(existsSync(path.join(fx.root, "h2.txt")));
  } finally {
    await client.close();
    await server.stop();
  }
});

/** The id of the one request waiting in the queue (bounded: 20 s). */
async function waitForQueued(): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const r = await runCli(["approvals", "list", "--json", "--state-dir", fx.state]);
    if (Array.isArray(r.json) && r.json.length === 1) return r.json[0].id as string;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error("no request reached the approval queue");
}
