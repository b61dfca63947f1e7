// Two latch checkouts and the reference server in one client, in turns: a change's effect on reads or
// edit cycles over MCP stdio, where two separate runs of bench/mcp.ts differ by more than the change.
// Each round runs a block on A, on B and on the peer (A and B swap places every other round); the
// figures are medians of the per-round ratios. A plain JSON-lines client (no SDK), so the client's own
// cost is small and the same for all three. Prints only; nothing goes into RESULTS.md.
// Usage: node --import tsx bench/mcp-ab.ts --a DIR --b DIR [--edits] [--rounds 20] [--block 200]
//   DIR: a checkout with dist/ built (e.g. a `git archive` of a commit, node_modules linked, npm run build)
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { measuredLine, median, REPO, watchLoad } from "./report.js";

const PEER = path.join(REPO, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i > 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`bench/mcp-ab.ts: --${name} is required (see the usage at the top)`);
  return v;
}

interface Server {
  req(method: string, params: unknown): Promise<{ error?: unknown; result?: { isError?: boolean } }>;
  note(method: string): void;
  /** End its stdin (latch stops and finishes its log) and wait for it to exit; the peer is killed. */
  close(): Promise<void>;
}

function server(args: string[]): Server {
  const p = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] });
  let buf = "";
  let id = 0;
  const waiting = new Map<number, (v: never) => void>();
  p.stdout.setEncoding("utf8");
  p.stdout.on("data", (d: string) => {
    buf += d;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line) continue;
      const m = JSON.parse(line) as { id?: number };
      if (m.id !== undefined) waiting.get(m.id)?.(m as never);
      if (m.id !== undefined) waiting.delete(m.id);
    }
  });
  const send = (o: unknown) => p.stdin.write(`${JSON.stringify(o)}\n`);
  return {
    req: (method, params) =>
      new Promise((resolve) => {
        const n = ++id;
        waiting.set(n, resolve);
        send({ jsonrpc: "2.0", id: n, method, params });
      }),
    note: (method) => send({ jsonrpc: "2.0", method }),
    close: () =>
      new Promise((resolve) => {
        if (p.exitCode !== null || p.signalCode !== null) return resolve();
        const kill = setTimeout(() => p.kill("SIGKILL"), 5000);
        p.once("exit", () => {
          clearTimeout(kill);
          resolve();
        });
        p.stdin.end();
        if (args[0] === PEER) p.kill();
      }),
  };
}

async function main(): Promise<void> {
  const load = watchLoad();
  const dirA = path.resolve(arg("a"));
  const dirB = path.resolve(arg("b"));
  const edits = process.argv.includes("--edits");
  const rounds = Number(arg("rounds", "20"));
  const block = Number(arg("block", edits ? "50" : "200"));
  const base = mkdtempSync(path.join(os.tmpdir(), "latch-mcp-ab-"));
  const root = (name: string) => {
    const r = path.join(base, name);
    mkdirSync(r);
    writeFileSync(path.join(r, "four-kb.txt"), "0123456789abcde\n".repeat(256));
    writeFileSync(path.join(r, "edit.txt"), "counter 0\n" + "filler line\n".repeat(300));
    return r;
  };
  const [rA, rB, rP] = [root("a"), root("b"), root("p")];
  const latch = (dir: string, r: string, name: string) =>
    server([path.join(dir, "dist/cli/main.js"), "mcp", "--root", r, "--state-dir", path.join(base, `state-${name}`)]);
  const A = latch(dirA, rA, "a");
  const B = latch(dirB, rB, "b");
  const P = server([PEER, rP]);
  try {
    for (const s of [A, B, P]) {
      await s.req("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "ab", version: "1" },
      });
      s.note("notifications/initialized");
      await s.req("tools/list", {});
    }
    const ok = (r: Awaited<ReturnType<Server["req"]>>) => {
      if (r.error || r.result?.isError) throw new Error(`a call failed: ${JSON.stringify(r).slice(0, 400)}`);
    };
    const counter = new Map<Server, number>([
      [A, 0],
      [B, 0],
      [P, 0],
    ]);
    const call = async (s: Server) => {
      if (!edits) {
        ok(
          s === P
            ? await s.req("tools/call", { name: "read_text_file", arguments: { path: path.join(rP, "four-kb.txt") } })
            : await s.req("tools/call", { name: "read_file", arguments: { path: "four-kb.txt", force: true } }),
        );
        return;
      }
      const k = counter.get(s)!;
      counter.set(s, k + 1);
      const change = { from: `counter ${k}\n`, to: `counter ${k + 1}\n` };
      if (s === P) {
        const args = { path: path.join(rP, "edit.txt"), edits: [{ oldText: change.from, newText: change.to }] };
        ok(await s.req("tools/call", { name: "edit_file", arguments: args }));
        return;
      }
      ok(await s.req("tools/call", { name: "read_file", arguments: { path: "edit.txt", force: true } }));
      const args = { path: "edit.txt", old_string: change.from, new_string: change.to };
      ok(await s.req("tools/call", { name: "edit_file", arguments: args }));
    };
    const timed = async (s: Server, n: number) => {
      const t = performance.now();
      for (let i = 0; i < n; i++) await call(s);
      return performance.now() - t;
    };
    for (const s of [A, B, P]) await timed(s, block / 2); // warm-up
    const aPeer: number[] = [];
    const bPeer: number[] = [];
    const bA: number[] = [];
    const sum = { a: 0, b: 0, p: 0 };
    for (let r = 0; r < rounds; r++) {
      const t = new Map<Server, number>();
      for (const s of r % 2 ? [B, A, P] : [A, B, P]) t.set(s, await timed(s, block));
      const [a, b, p] = [t.get(A)!, t.get(B)!, t.get(P)!];
      sum.a += a;
      sum.b += b;
      sum.p += p;
      aPeer.push(p / a);
      bPeer.push(p / b);
      bA.push(a / b);
    }
    load.stop();
    const rate = (ms: number) => ((rounds * block) / ms) * 1000;
    const what = edits ? "edit cycles (latch: read + edit; peer: edit)" : "reads of a 4 KB file";
    console.log(
      [
        measuredLine(
          `node --import tsx bench/mcp-ab.ts --a ${dirA} --b ${dirB}${edits ? " --edits" : ""} --rounds ${rounds} --block ${block}`,
          load,
        ),
        "",
        `${what}, ${rounds} rounds of ${block} per server; ratios: median of the rounds' (all rounds together).`,
        "",
        "| | A | B | peer |",
        "|---|---|---|---|",
        `| per second | ${rate(sum.a).toFixed(0)} | ${rate(sum.b).toFixed(0)} | ${rate(sum.p).toFixed(0)} |`,
        `| ÷ peer (higher is better) | ${median(aPeer).toFixed(3)} (${(sum.p / sum.a).toFixed(3)}) | ${median(bPeer).toFixed(3)} (${(sum.p / sum.b).toFixed(3)}) | |`,
        `| B ÷ A | | ${median(bA).toFixed(3)} (${(sum.a / sum.b).toFixed(3)}) | |`,
      ].join("\n"),
    );
  } finally {
    await Promise.all([A, B, P].map((s) => s.close()));
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
