// Timing a whole process from its spawn, for the start benches (start.ts, start-snapshot.ts): to its
// exit, or for an MCP server over stdio to its first tools/list answer.
import { spawn } from "node:child_process";
import { cpuOf } from "./report.js";

/**
 * The environment every command here runs in: this one without NODE_EXTRA_CA_CERTS. Node 20 reads
 * that file at every start, before any code runs: ~36 ms a process where it names the system's CA
 * bundle, as in this workplace (`node -e 0` 60 against 24 ms); Node 22 and 24 read it when a TLS
 * connection first needs it. A user's start pays it only on Node 20 with the variable set.
 */
export const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_EXTRA_CA_CERTS"));

export interface Sample {
  wall: number;
  cpu: number;
}

/** A command that exits: wall to exit, CPU from /usr/bin/time's rusage of it. */
export function timedExit(args: string[]): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn("/usr/bin/time", ["-f", "latch-bench-cpu %U %S", process.execPath, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: ENV,
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const wall = performance.now() - t0;
      const m = /latch-bench-cpu ([\d.]+) ([\d.]+)/.exec(err);
      if (code !== 0 || !m) return reject(new Error(`${args.join(" ")}: exit ${code}: ${err.slice(0, 300)}`));
      resolve({ wall, cpu: (Number(m[1]) + Number(m[2])) * 1000 });
    });
  });
}

/** An MCP server over stdio: spawn, initialize, initialized, tools/list; the sample is taken at the answer. */
export function timedStart(args: string[], tools: (n: number) => void): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"], env: ENV });
    const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + "\n");
    let buf = "";
    let sample: Sample | undefined;
    child.on("error", reject);
    child.on("close", () =>
      sample ? resolve(sample) : reject(new Error(`${args.join(" ")} ended before tools/list`)),
    );
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const m = JSON.parse(buf.slice(0, i)) as { id?: number; result?: { tools?: unknown[] } };
        buf = buf.slice(i + 1);
        if (m.id === 1) {
          send({ jsonrpc: "2.0", method: "notifications/initialized" });
          send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
        } else if (m.id === 2) {
          sample = { wall: performance.now() - t0, cpu: cpuOf(child.pid!) };
          tools(m.result?.tools?.length ?? 0);
          child.stdin.end();
        }
      }
    });
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
    });
  });
}
