// `latch mcp` over raw stdio, line by line, for what an SDK client cannot send or cannot survive:
// malformed JSON-RPC, oversized lines, a closed stdout, signals. Responses are matched by id.
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CLI } from "./cli.js";

export interface RpcReply {
  id: string | number | null;
  result?: any;
  error?: { code: number; message: string };
}

/** A client's first message, as a raw line's object; then INITIALIZED. */
export const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
export const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

export class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  readonly replies: RpcReply[] = [];
  /** Bytes of each line read from stdout, in order. */
  readonly lineSizes: number[] = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private pending = "";
  private waiters: { match: (r: RpcReply) => boolean; resolve: (r: RpcReply) => void }[] = [];

  /** `cli`: another build's main.js (a copy of dist/ a test changed). */
  constructor(args: string[], env: Record<string, string> = {}, cwd?: string, cli = CLI) {
    this.child = spawn(process.execPath, [cli, "mcp", ...args], { env: { ...process.env, ...env }, cwd });
    this.child.stdin.on("error", () => undefined); // the server may be gone: writes then fail, and tests check why
    this.child.stdout.on("error", () => undefined);
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.child.stdout.on("data", (d: Buffer) => {
      this.pending += d.toString("utf8");
      let nl: number;
      while ((nl = this.pending.indexOf("\n")) !== -1) {
        const line = this.pending.slice(0, nl);
        this.pending = this.pending.slice(nl + 1);
        this.lineSizes.push(Buffer.byteLength(line));
        const msg = JSON.parse(line) as RpcReply;
        this.replies.push(msg);
        for (const w of [...this.waiters])
          if (w.match(msg)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(msg);
          }
      }
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
  }

  write(line: string | Buffer): void {
    this.child.stdin.write(line);
    this.child.stdin.write("\n");
  }

  send(msg: unknown): void {
    this.write(JSON.stringify(msg));
  }

  /** The reply with this id (a reply already read counts). */
  reply(id: string | number | null): Promise<RpcReply> {
    const match = (r: RpcReply) => r.id === id && ("result" in r || "error" in r);
    const seen = this.replies.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  request(id: string | number, method: string, params?: unknown): Promise<RpcReply> {
    this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return this.reply(id);
  }

  async init(): Promise<void> {
    const r = await this.request("init", "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    });
    if (!r.result) throw new Error(`initialize failed: ${JSON.stringify(r)}`);
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  call(id: string | number, name: string, args: unknown, progressToken?: string): Promise<RpcReply> {
    return this.request(id, "tools/call", {
      name,
      arguments: args,
      ...(progressToken ? { _meta: { progressToken } } : {}),
    });
  }
}

/** Digits unique to this test process, for sleep durations that name a test's own children: another
 * suite on the same machine (a second checkout, another Node) runs the same tests, and its sleeps
 * must not count as ours. */
export const RUN_TAG = String(process.pid % 100_000).padStart(5, "0");

/** Processes whose command line is exactly `line` (a marker no other process runs). */
export function processesRunning(line: string): number[] {
  return execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.slice(l.indexOf(" ") + 1) === line)
    .map((l) => Number(l.slice(0, l.indexOf(" "))));
}

/** The policy logs a state dir holds. */
export function policyLogs(stateDir: string): string[] {
  const dir = path.join(stateDir, "logs");
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => path.join(dir, f));
  } catch {
    return [];
  }
}

/** The outcome records of a policy log, by status. */
export function outcomes(logFile: string): string[] {
  return readFileSync(logFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l).record)
    .filter((r) => r.type === "effect_outcome")
    .map((r) => String(r.status));
}
