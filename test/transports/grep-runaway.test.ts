// A regex that backtracks without end, on the JS grep engine: it must never stop the server from
// answering other calls, it must end with an error that names the fix, and a cancel must stop it.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { makeFixture } from "../helpers/fixture.js";
import { stdioClient } from "../helpers/mcp.js";
import { expectError, expectOk } from "../helpers/expect.js";

type Out = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: unknown };
const text = (o: Out) => (o.content ?? []).map((c) => c.text ?? "").join("\n");
/** A bounded wait: resolves to "timed out" after `ms` when `p` has not settled. */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<"timed out">((r) => setTimeout(() => r("timed out"), ms).unref())]);

describe("grep: a runaway regex on the JS engine", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());
  // `(a+)+$` against a line of a's that ends in something else backtracks exponentially.
  fx.write({
    "big.txt": "a".repeat(1 << 20) + "!\n",
    "lines-big.txt": "!\n" + ("a".repeat(60) + "\n").repeat(20_000) + "?",
    "small.txt": "hello\n",
    "lines.txt": "aaa\nbbb\n",
  });

  /** A runaway grep over MCP: another call is answered within 1 s meanwhile, and the grep ends naming the fix. */
  async function staysBounded(args: Record<string, unknown>, file: string): Promise<void> {
    const client = await stdioClient(["--root", fx.root, "--state-dir", fx.state], undefined, {
      LATCH_GREP_ENGINE: "js",
    });
    try {
      let searching!: () => void;
      const started = new Promise<void>((r) => (searching = r));
      const grep = client.callTool({ name: "grep", arguments: args }, undefined, {
        onprogress: () => searching(),
        timeout: 120_000,
      }) as Promise<Out>;
      await started; // the engine has begun the search
      const read = (await within(client.callTool({ name: "read_file", arguments: { path: "small.txt" } }), 1000)) as
        Out | "timed out";
      assert.notEqual(read, "timed out", "the server answered nothing while the regex ran");
      assert.equal((read as Out).isError, undefined, JSON.stringify(read));
      assert.match(text(read as Out), /hello/);

      const out = await grep;
      assert.equal(out.isError, true, JSON.stringify(out).slice(0, 500));
      assert.match(text(out), /ETIMEDOUT/);
      assert.ok(text(out).includes(file), text(out));
      assert.match(text(out), /rg engine/);
      assert.match(text(out), /[Ss]implify the pattern/);

      // The engine still works after its thread was stopped.
      const again = (await client.callTool({
        name: "grep",
        arguments: { pattern: "^a+$", path: "lines.txt", regex: true },
      })) as Out;
      assert.equal(again.isError, undefined, JSON.stringify(again));
      assert.match(text(again), /1: aaa/);
    } finally {
      await client.close();
    }
  }

  test("(a+)+$ on a 1 MB line: another call is answered within 1 s, and the grep ends naming the fix", async () => {
    await staysBounded({ pattern: "(a+)+$", path: "big.txt", regex: true }, "big.txt");
  });

  test("multiline: ((?:a|\\n)+)+! over a file of many lines stays bounded the same way", async () => {
    // The whole file is one text in multiline mode; the "!" at its start passes the literal prefilter.
    await staysBounded(
      { pattern: "((?:a|\\n)+)+!", path: "lines-big.txt", regex: true, multiline: true },
      "lines-big.txt",
    );
  });

  test("a cancelled runaway grep ends as cancelled, at once, not at the time limit", async () => {
    const host = await fx.host({ env: { PATH: process.env.PATH ?? "", LATCH_GREP_ENGINE: "js" } });
    const ctl = new AbortController();
    let searching!: () => void;
    const started = new Promise<void>((r) => (searching = r));
    const call = host.call(
      "grep",
      { pattern: "(a+)+$", path: "big.txt", regex: true },
      { signal: ctl.signal, onProgress: () => searching() },
    );
    await started;
    ctl.abort();
    const out = await within(call, 2000);
    if (out === "timed out") assert.fail("the cancel was ignored");
    assert.equal(expectError(out).code, "ECANCELED", JSON.stringify(out));
    // A folder search with a pattern that finishes: the same host answers, through a new thread.
    const ok = await host.call("grep", { pattern: "b+$", regex: true });
    assert.equal(ok.status, "ok", JSON.stringify(ok));
    assert.match(String(expectOk<{ results: string }>(ok).result.results), /lines\.txt:2: bbb/);
  });
});
