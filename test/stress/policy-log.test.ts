import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { canonicalJson, sha256Json } from "../../src/audit/canonical-json.js";
import { decisionDurability } from "../../src/host/pipeline.js";
import { lineHash, PolicyLog, SYNC_DELAY_MS } from "../../src/audit/log.js";
import { TOOLS } from "../../src/registry.js";
import { verifyLog } from "../../src/audit/log-verify.js";
import { runCli } from "../helpers/cli.js";
import { makeFixture } from "../helpers/fixture.js";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { expectRefused } from "../helpers/expect.js";

describe("the policy log", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  /** A finished log of a small run: an allowed write, a read, a denied write (envelope), a refused write (toolset). */
  async function makeLog(name: string, extra = {}): Promise<string> {
    const file = path.join(fx.base, name);
    fx.write({ "seen.txt": "one\n" });
    const host = await fx.host({ policyLog: file, ...extra });
    assert.equal((await host.call("write_file", { path: `${name}.out`, content: "a\n" })).status, "ok");
    assert.equal((await host.call("read_file", { path: "seen.txt" })).status, "ok");
    assert.equal((await host.call("write_file", { path: ".env", content: "K=1\n" })).status, "refused");
    assert.equal((await host.call("write_file", { path: "../outside.txt", content: "x" })).status, "refused");
    host.close();
    return file;
  }

  test("is created 0600, chained line by line, ends with run_finished, and verifies", async () => {
    const file = await makeLog("good.jsonl");
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const lines = readFileSync(file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.record.type),
      [
        "run_started",
        "effect_decision",
        "effect_outcome",
        "effect_decision",
        "effect_outcome",
        "effect_decision",
        "effect_decision",
        "run_finished",
      ],
    );
    let prev = "0".repeat(64);
    for (const [i, l] of lines.entries()) {
      assert.equal(l.sequence, i + 1);
      assert.equal(l.previous_sha256, prev);
      assert.equal(
        l.record_sha256,
        sha256Json({ sequence: l.sequence, previous_sha256: l.previous_sha256, record: l.record }),
      );
      prev = l.record_sha256;
    }
    const start = lines[0].record;
    assert.deepEqual(Object.keys(start).sort(), [
      "at",
      "config_sha256",
      "envelope",
      "evidence",
      "format_version",
      "latch_version",
      "posture",
      "programs",
      "type",
    ]);
    assert.equal(start.evidence, false);
    const denied = lines[5].record;
    assert.equal(denied.final, "deny");
    assert.match(denied.reason, /credential quarantine/);
    assert.deepEqual(
      denied.gates.map((g: { gate: string }) => g.gate),
      ["registry", "toolset", "envelope"],
    );
    assert.equal(lines[6].record.gates[1].action, "deny"); // the toolset refusal is on record too
    // hashes only by default: the content written is nowhere in the log
    assert.equal(readFileSync(file, "utf8").includes("K=1"), false);
    assert.equal(lines[1].record.request_sha256, sha256Json({ path: "good.jsonl.out", content: "a\n" }));
    assert.deepEqual(verifyLog(readFileSync(file, "utf8")).ok, true);
  });

  test("--policy-evidence adds the raw request and result", async () => {
    const file = await makeLog("evidence.jsonl", { policyEvidence: true });
    const lines = readFileSync(file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(lines[0].record.evidence, true);
    assert.deepEqual(lines[1].record.request, { path: "evidence.jsonl.out", content: "a\n" });
    assert.equal(lines[2].record.result.written, true);
    assert.equal(verifyLog(readFileSync(file, "utf8")).ok, true);
  });

  test("an existing path is refused, never appended to", async () => {
    const file = path.join(fx.base, "exists.jsonl");
    writeFileSync(file, "keep\n");
    await assert.rejects(fx.host({ policyLog: file }), /already exists; a log is never appended to/);
    assert.equal(readFileSync(file, "utf8"), "keep\n");
  });

  test("the log is in the control plane: no tool reads, lists, greps or writes it", async () => {
    const file = path.join(fx.root, "policy.jsonl");
    const host = await fx.host({ policyLog: file });
    const r = await host.call("read_file", { path: "policy.jsonl" });
    assert.equal(r.status, "refused");
    const w = await host.call("write_file", { path: "policy.jsonl", content: "forged\n" });
    assert.equal(w.status, "refused");
    // A walk neither names it nor shows a line of it (every line of the log holds `record_sha256`).
    const seen = [
      await host.call("list_dir", { path: "." }),
      await host.call("find_files", { pattern: "*.jsonl" }),
      await host.call("grep", { pattern: "effect_decision" }),
    ];
    for (const out of seen) {
      assert.equal(out.status, "ok", JSON.stringify(out));
      assert.doesNotMatch(JSON.stringify(out), /policy\.jsonl|record_sha256/, JSON.stringify(out));
    }
    host.close();
    const text = readFileSync(file, "utf8");
    assert.equal(verifyLog(text).ok, true);
    assert.doesNotMatch(text, /forged/);
    // And the log records both refusals as denials.
    const denied = text
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => (JSON.parse(l) as { record: { type: string; tool?: string; final?: string } }).record)
      .filter((rec) => rec.type === "effect_decision" && rec.final === "deny")
      .map((rec) => rec.tool);
    assert.deepEqual(denied, ["read_file", "write_file"]);
  });

  describe("tampering is reported at the right line by `latch log verify`", () => {
    const tamper = async (name: string, edit: (lines: string[]) => string, line: number, why: RegExp) => {
      const file = await makeLog(`t-${name}.jsonl`);
      const lines = readFileSync(file, "utf8").split("\n").slice(0, -1);
      const bad = path.join(fx.base, `bad-${name}.jsonl`);
      writeFileSync(bad, edit(lines));
      const r = verifyLog(readFileSync(bad, "utf8"));
      assert.equal(r.ok, false, name);
      assert.equal(r.fault!.line, line, `${name}: ${r.fault!.message}`);
      assert.match(r.fault!.message, why);
      // A copy has no head kept (--no-head): the chain alone must name the line. The state dir is the
      // fixture's: the default one is this file's own, with no latch.db (where verify notes that first).
      const cli = await runCli(["log", "verify", "--no-head", "--state-dir", fx.state, bad]);
      assert.equal(cli.code, 1);
      const [first, summary] = cli.stdout.split("\n");
      assert.ok(first.startsWith(`${bad}:${line}: ${r.fault!.message} (`), first);
      assert.equal(summary, "1 runs: 0 ok, 1 failed; 0 pruned by retention (heads kept)");
    };

    test("a good log verifies through the CLI, exit 0", async () => {
      const file = await makeLog("cli-good.jsonl");
      const cli = await runCli(["log", "verify", "--state-dir", fx.state, file]);
      assert.equal(cli.code, 0, cli.stdout + cli.stderr);
      assert.match(cli.stdout, /: ok: 8 records, \S+Z \.\. \S+Z, head kept\n/);
    });

    test("flipping one byte", () =>
      tamper(
        "flip",
        (l) => {
          // "write_file" → "wrote_file" in line 2's record: still valid JSON, wrong hash
          l[1] = l[1].replace('"tool":"write_file"', '"tool":"wrote_file"');
          return l.join("\n") + "\n";
        },
        2,
        /record_sha256 does not match/,
      ));

    test("flipping one byte anywhere in any line", async () => {
      const file = await makeLog("flip-all.jsonl");
      const text = readFileSync(file);
      const starts = [0];
      for (let i = 0; i < text.length - 1; i++) if (text[i] === 10) starts.push(i + 1);
      for (let k = 0; k < 200; k++) {
        const at = (k * 7919) % (text.length - 1);
        const copy = Buffer.from(text);
        copy[at] ^= 0x01;
        const r = verifyLog(copy.toString("utf8"));
        const line = starts.filter((s) => s <= at).length;
        assert.equal(r.ok, false, `byte ${at}`);
        // a flipped newline merges or splits lines: reported at that line or the one after
        assert.ok(
          r.fault!.line === line || (text[at] === 10 && r.fault!.line === line + 1),
          `byte ${at}: line ${r.fault!.line}, expected ${line} (${r.fault!.message})`,
        );
      }
    });

    test("dropping a line", () =>
      tamper("drop", (l) => [...l.slice(0, 3), ...l.slice(4)].join("\n") + "\n", 4, /sequence is 5, expected 4/));

    test("swapping two lines", () =>
      tamper("swap", (l) => [l[0], l[1], l[3], l[2], ...l.slice(4)].join("\n") + "\n", 3, /sequence is 4, expected 3/));

    test("truncating mid-line", () => tamper("trunc-mid", (l) => l.join("\n").slice(0, -40), 8, /cut mid-line/));

    test("truncating at a line boundary", () =>
      tamper("trunc-line", (l) => l.slice(0, 6).join("\n") + "\n", 7, /does not end with run_finished/));

    test("appending a forged record with correct hashes", () =>
      tamper(
        "forge",
        (l) => {
          const last = JSON.parse(l[l.length - 1]);
          const record = {
            type: "effect_decision",
            effect_id: 99,
            tool: "write_file",
            session: "x",
            request_sha256: "0".repeat(64),
            gates: [],
            final: "deny",
            reason: "forged",
          };
          const seq = last.sequence + 1;
          const forged = {
            sequence: seq,
            previous_sha256: last.record_sha256,
            record,
            record_sha256: lineHash(seq, last.record_sha256, record),
          };
          return [...l, JSON.stringify(forged)].join("\n") + "\n";
        },
        9,
        /follows run_finished/,
      ));

    test("dropping an allowed effect's outcome (and re-chaining the rest)", () =>
      tamper(
        "no-outcome",
        (l) => {
          // a forger who recomputes every hash after removing line 3 still leaves effect 1 without an outcome
          const recs = l.map((x) => JSON.parse(x).record);
          recs.splice(2, 1);
          let prev = "0".repeat(64);
          return (
            recs
              .map((record, i) => {
                const line = {
                  sequence: i + 1,
                  previous_sha256: prev,
                  record,
                  record_sha256: lineHash(i + 1, prev, record),
                };
                prev = line.record_sha256;
                return JSON.stringify(line);
              })
              .join("\n") + "\n"
          );
        },
        2,
        /allowed but has no outcome/,
      ));
  });

  test("canonical JSON sorts keys at every depth", () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null, u: undefined } }),
      '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}',
    );
    assert.equal(canonicalJson([undefined, "é\n"]), '[null,"é\\n"]');
    const record = { type: "effect_outcome", effect_id: 2, status: "ok", result_sha256: "ab" };
    assert.equal(lineHash(7, "cd", record), sha256Json({ sequence: 7, previous_sha256: "cd", record }));
  });
});

describe("when the log is synced", () => {
  const fx = makeFixture();
  after(() => fx.cleanup());

  test("a sync record is fdatasynced before append returns; a write record is on disk at once and synced within SYNC_DELAY_MS", async () => {
    const file = path.join(fx.base, "timing.jsonl");
    const log = PolicyLog.create(file);
    log.append(
      {
        type: "run_started",
        format_version: 1,
        latch_version: "t",
        config_sha256: null,
        programs: [],
        posture: null,
        evidence: false,
        envelope: "auto_edit",
        at: "x",
      },
      "write",
    );
    assert.equal(readFileSync(file, "utf8").split("\n").length, 2, "the line is in the file before append returns");
    assert.equal(log.syncs, 0);
    await new Promise((r) => setTimeout(r, SYNC_DELAY_MS * 3));
    assert.equal(log.syncs, 1, "the timer synced it");
    log.append(
      {
        type: "effect_decision",
        effect_id: 1,
        tool: "read_file",
        session: "s",
        request_sha256: "ab",
        gates: [],
        final: "allow",
        reason: "r",
      },
      "write",
    );
    log.append({ type: "effect_outcome", effect_id: 1, status: "ok", result_sha256: "cd" }, "sync");
    assert.equal(log.syncs, 2, "the sync record covered the write record before it");
    await new Promise((r) => setTimeout(r, SYNC_DELAY_MS * 3));
    assert.equal(log.syncs, 2, "no timer is left once a sync has run");
    log.finish(1);
    assert.equal(log.syncs, 3);
    assert.equal(verifyLog(readFileSync(file, "utf8")).ok, true);
  });

  test("decisions of calls that can change something are always synced first; reads only under --log-sync all", () => {
    for (const tool of TOOLS) assert.equal(decisionDurability(tool, "all"), "sync", tool.name);
    // The list is written out, not derived from the annotations: a tool that starts changing things
    // while still marked read-only must fail here.
    const deferred = TOOLS.filter((t) => decisionDurability(t, "effects") === "write")
      .map((t) => t.name)
      .sort();
    assert.deepEqual(deferred, [
      "ast_rewrite_preview",
      "ast_search",
      "count_stats",
      "find_files",
      "grep",
      "list_dir",
      "outline",
      "process_list",
      "process_output",
      "read_file",
      "read_file_range",
      "read_many_files",
      "read_media",
      "skill",
      "stat_file",
      "url_fetch",
      "web_search",
    ]);
  });

  test("--log-sync takes effects or all, and names the fix otherwise", async () => {
    fx.write({ "a.txt": "a\n" });
    const bad = await runCli([
      "call",
      "read_file",
      '{"path":"a.txt"}',
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
      "--log-sync",
      "sometimes",
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stdout, /Expected `--log-sync` to be effects or all, got `sometimes`/);
    const logFile = path.join(fx.base, "all.jsonl");
    const good = await runCli([
      "call",
      "read_file",
      '{"path":"a.txt"}',
      "--root",
      fx.root,
      "--state-dir",
      fx.state,
      "--log-sync",
      "all",
      "--policy-log",
      logFile,
    ]);
    assert.equal(good.code, 0, good.stderr);
    assert.equal(verifyLog(readFileSync(logFile, "utf8")).ok, true);
  });
});

describe("a log that cannot be written blocks execution while it cannot", () => {
  const fx = makeFixture();
  const mounts: (() => void)[] = [];
  after(() => {
    for (const unmount of mounts) unmount();
    fx.cleanup();
  });

  test("on a full disk: calls are refused, nothing is written; with space again they are served, and the log verifies", async () => {
    const disk = path.join(fx.base, "full");
    mounts.push(mountTmpfs(disk, "size=64k"));
    const logFile = path.join(disk, "log.jsonl");
    const host = await fx.host({ policyLog: logFile, policyEvidence: true });
    // fill the disk
    const filler = path.join(disk, "filler");
    try {
      writeFileSync(filler, Buffer.alloc(1 << 20));
    } catch {
      // ENOSPC expected: the disk is now full
    }
    const big = "x".repeat(16 * 1024);
    const a = await host.call("write_file", { path: "a.txt", content: big });
    assert.equal(expectRefused(a).gate, "log");
    assert.match(expectRefused(a).reason, /cannot be written now \(ENOSPC\)/);
    assert.match(expectRefused(a).hint ?? "", /as soon as the fault clears/);
    assert.equal(existsSync(path.join(fx.root, "a.txt")), false);
    // The half-written line was cut back: the file holds whole lines only.
    assert.ok(readFileSync(logFile, "utf8").endsWith("\n"), "no partial line is left");
    const b = await host.call("write_file", { path: "b.txt", content: big });
    assert.equal(expectRefused(b).gate, "log");
    assert.equal(existsSync(path.join(fx.root, "b.txt")), false);
    // Space again: served at once, no restart.
    writeFileSync(filler, "");
    const c = await host.call("write_file", { path: "c.txt", content: "small" });
    assert.equal(c.status, "ok", JSON.stringify(c));
    assert.equal(readFileSync(path.join(fx.root, "c.txt"), "utf8"), "small");
    assert.equal((await host.call("read_file", { path: "c.txt" })).status, "ok");
    host.close();
    const v = verifyLog(readFileSync(logFile, "utf8"));
    assert.equal(v.ok, true, JSON.stringify(v.fault));
    const cli = await runCli(["log", "verify", "--state-dir", fx.state, logFile]);
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    const tools = readFileSync(logFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).record)
      .filter((r) => r.type === "effect_decision")
      .map((r) => r.tool);
    assert.deepEqual(tools, ["write_file", "read_file"], "the refused calls left no line");
  });

  test("on a read-only disk: an explicit log stops startup; a default log refuses calls until it can be made", async () => {
    const ro = path.join(fx.base, "ro");
    mounts.push(mountTmpfs(ro, "ro,size=64k"));
    await assert.rejects(fx.host({ policyLog: path.join(ro, "log.jsonl") }), /policy log .* cannot be created \(EROFS/);
    // the default log goes to <state>/logs: make that folder a read-only disk
    const logs = path.join(fx.state, "logs");
    const unmount = mountTmpfs(logs, "ro,size=64k");
    const host = await fx.host();
    const r = await host.call("write_file", { path: "ro.txt", content: "x" });
    assert.equal(expectRefused(r).gate, "log");
    assert.match(expectRefused(r).reason, /cannot be created .*EROFS.* refused until it can be/);
    assert.equal(existsSync(path.join(fx.root, "ro.txt")), false);
    const again = await host.call("read_file", { path: "ro.txt" });
    assert.equal(expectRefused(again).gate, "log");
    // The folder is writable again: the next call makes the log and is served.
    unmount();
    assert.equal((await host.call("write_file", { path: "ro.txt", content: "x" })).status, "ok");
    host.close();
    const [file] = readdirSync(logs);
    const cli = await runCli(["log", "verify", "--state-dir", fx.state, path.join(logs, file)]);
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
  });

  test("the default log's folder replaced by a file (works as root): refused while it is, served after", async () => {
    const fx2 = makeFixture();
    try {
      const host = await fx2.host();
      const logs = path.join(fx2.state, "logs");
      rmSync(logs, { recursive: true, force: true });
      writeFileSync(logs, "not a folder");
      const r = await host.call("write_file", { path: "f.txt", content: "x" });
      assert.equal(expectRefused(r).gate, "log");
      assert.match(expectRefused(r).reason, /cannot be created/);
      assert.equal(existsSync(path.join(fx2.root, "f.txt")), false);
      rmSync(logs);
      assert.equal((await host.call("write_file", { path: "f.txt", content: "x" })).status, "ok");
      host.close();
      const [file] = readdirSync(logs);
      const cli = await runCli(["log", "verify", "--state-dir", fx2.state, path.join(logs, file)]);
      assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    } finally {
      fx2.cleanup();
    }
  });
});
