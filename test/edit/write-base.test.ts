// Writes carry their base: a write lands only if the file still holds the content the call was
// computed from (the session's last read or write of it, taken when the call starts). Two writes
// from one read cannot both land, even in one session, whose marker the first one moves on.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { replaceStreamed } from "../../src/edit/mutate-stream.js";
import { Ledger } from "../../src/fs/ledger.js";
import { mutate } from "../../src/edit/mutate.js";
import type { ResolvedPath } from "../../src/fs/paths.js";
import { makeFixture } from "../helpers/fixture.js";
import { RawStdio, type RpcReply } from "../helpers/raw-stdio.js";

describe("two parallel writes from one read", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("over real stdio in one MCP session: exactly one lands, the other is refused as stale", async () => {
    fx.write({ "race.txt": "original\n" });
    const s = new RawStdio(["--root", fx.root, "--state-dir", fx.state, "--yes"]);
    const text = (r: RpcReply) => String(r.result?.content?.[0]?.text);
    try {
      await s.init();
      for (let round = 0; round < 8; round++) {
        const read = await s.call(`read-${round}`, "read_file", { path: "race.txt", force: true });
        assert.equal(read.result?.isError, undefined, JSON.stringify(read));
        // Both requests in one write, so latch has both before it answers either: sent in two writes
        // (as an SDK client does), a client descheduled between them under load can deliver the second
        // after the first was answered, and that one is then a later write, based on the first.
        const contents = [`first ${round}\n`, `second ${round}\n`];
        const ids = contents.map((_, i) => `w-${round}-${i}`);
        const lines = contents.map((content, i) =>
          JSON.stringify({
            jsonrpc: "2.0",
            id: ids[i],
            method: "tools/call",
            params: { name: "write_file", arguments: { path: "race.txt", content } },
          }),
        );
        s.child.stdin.write(lines.join("\n") + "\n"); // one write, both newlines in it
        const outs = await Promise.all(ids.map((id) => s.reply(id)));
        const landed = outs.filter((o) => o.result?.isError !== true);
        const refused = outs.filter((o) => o.result?.isError === true);
        assert.equal(landed.length, 1, `round ${round}: ${JSON.stringify(outs)}`);
        assert.equal(refused.length, 1);
        assert.match(text(refused[0]), /^Refused: .*changed since you read it.*nothing was written/);
        const winner = contents[outs.indexOf(landed[0])];
        assert.equal(readFileSync(path.join(fx.root, "race.txt"), "utf8"), winner, "the disk holds the landed write");
        assert.match(text(landed[0]), /"written":true/);
      }
      // A write based on the session's own last write still lands (the marker moved with it).
      const w1 = await s.call("a", "write_file", { path: "race.txt", content: "a\n" });
      const w2 = await s.call("b", "write_file", { path: "race.txt", content: "b\n" });
      assert.equal(w1.result?.isError, undefined, JSON.stringify(w1));
      assert.equal(w2.result?.isError, undefined, JSON.stringify(w2));
      assert.equal(readFileSync(path.join(fx.root, "race.txt"), "utf8"), "b\n");
    } finally {
      s.child.stdin.end();
      await s.exited;
    }
  });

  test("edit_file and sed in one session from one read: one lands, the other is refused, no change lost", async () => {
    fx.write({ "e.txt": "one\ntwo\n" });
    const host = await fx.host();
    assert.equal((await host.call("read_file", { path: "e.txt" }, { session: "s" })).status, "ok");
    const [a, b] = await Promise.all([
      host.call("edit_file", { path: "e.txt", old_string: "one", new_string: "ONE" }, { session: "s" }),
      host.call("sed", { path: "e.txt", pattern: "two", replacement: "TWO" }, { session: "s" }),
    ]);
    const statuses = [a.status, b.status].sort();
    assert.deepEqual(statuses, ["ok", "refused"], JSON.stringify([a, b]));
    const disk = readFileSync(path.join(fx.root, "e.txt"), "utf8");
    assert.equal(disk, a.status === "ok" ? "ONE\ntwo\n" : "one\nTWO\n");
  });

  test("two parallel creations of a missing file: one lands, the other finds the file and is refused", async () => {
    const host = await fx.host();
    const outs = await Promise.all(
      ["x\n", "y\n"].map((content) => host.call("write_file", { path: "new.txt", content }, { session: "c" })),
    );
    assert.deepEqual(outs.map((o) => o.status).sort(), ["ok", "refused"], JSON.stringify(outs));
    const i = outs.findIndex((o) => o.status === "ok");
    assert.equal(readFileSync(path.join(fx.root, "new.txt"), "utf8"), ["x\n", "y\n"][i]);
  });
});

describe("the expected hash on a mutation", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("mutate and the streamed edit write only over the expected content", async () => {
    fx.write({ "m.txt": "abc\n" });
    const host = await fx.host();
    assert.equal((await host.call("read_file", { path: "m.txt" }, { session: "m" })).status, "ok");
    const ledger = new Ledger(host.state.db); // a second connection, as another process would have
    after(() => ledger.close());
    const ctx = { root: host.root, locksDir: host.state.locks, ledger, session: "m" };
    const target = { abs: path.join(host.root, "m.txt"), rel: "m.txt", input: "m.txt" } as ResolvedPath;
    const wrong = "0".repeat(64);
    await assert.rejects(
      mutate(ctx, { target, needs: "range", expectSha: wrong, apply: () => "zzz\n" }),
      /changed since you read it/,
    );
    await assert.rejects(
      replaceStreamed(ctx, { target, find: "abc", replace: "zzz", all: false, expectSha: wrong }),
      /changed since you read it/,
    );
    await assert.rejects(
      mutate(ctx, { target, needs: "range", expectSha: null, apply: () => "zzz\n" }),
      /changed since you read it/,
    );
    assert.equal(readFileSync(path.join(fx.root, "m.txt"), "utf8"), "abc\n", "nothing was written");
    const right = ledger.latest("m", target.abs)!;
    const ok = await mutate(ctx, { target, needs: "range", expectSha: right, apply: () => "xyz\n" });
    assert.equal(ok.written, true);
    assert.equal(readFileSync(path.join(fx.root, "m.txt"), "utf8"), "xyz\n");
  });
});
