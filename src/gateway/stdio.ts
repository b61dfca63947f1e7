// The stdio transport to an attached server latch starts. The SDK's StdioClientTransport spawns its
// command as given; a contained server is `bwrap … -- server`, which reads its socket filter on file
// descriptor 3 (sandbox/linux.ts), and whose whole process group must go when latch stops it. So this
// is the SDK's transport contract over the SDK's own framing (ReadBuffer, serializeMessage), with a
// spawn latch controls: its own process group, descriptor 3, a bound on one message.
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export interface SpawnSpec {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  fd3?: Buffer;
  /** The sandbox init's status descriptor (sandbox/init.ts): given a pipe, read and let go (a server's ending is not reported). */
  statusFd?: number;
  /** The longest message the server may send; past it the server is stopped (a flood is not buffered). */
  maxMessageBytes: number;
  /** Where the server's stderr goes (its own log, bounded by the caller). */
  onStderr(chunk: Buffer): void;
  /** The sandbox's own ending (its pids cgroup given back), once the server's process is gone. */
  cleanup?(): Promise<void>;
  /**
   * The paths whose mount the server's box lost (sandbox/holds.ts), looked at while it runs (at each
   * change in the folders `watch` watches, and every few seconds): one lost stops it, and the next call
   * starts it in a box that holds them as they are now.
   */
  holds?: { lost(): string[]; watch(look: () => void): () => void };
}

/** Descriptors 3 and up: the seccomp filter (3) and the init's status pipe, as process/exec.ts gives them. */
function extraFds(s: SpawnSpec): ("pipe" | "ignore")[] {
  const out: ("pipe" | "ignore")[] = [];
  if (s.fd3) out[0] = "pipe";
  if (s.statusFd !== undefined) out[s.statusFd - 3] = "pipe";
  return Array.from(out, (x) => x ?? "ignore");
}

/** Grace between SIGTERM to the server's process group and SIGKILL. */
const STOP_GRACE_MS = 1000;

export class SpawnedStdio implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child?: ChildProcess;
  private readonly buffer: ReadBuffer;
  /** Why the server was stopped by latch, for the error the pending call gets. */
  stoppedBecause?: string;

  constructor(readonly spec: SpawnSpec) {
    this.buffer = new ReadBuffer({ maxBufferSize: spec.maxMessageBytes });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("latch bug: an attached server's transport started twice");
    const s = this.spec;
    return new Promise((resolve, reject) => {
      const child = spawn(s.file, s.args, {
        cwd: s.cwd,
        env: s.env,
        detached: true, // its own process group: stopping it stops what it started
        stdio: ["pipe", "pipe", "pipe", ...extraFds(s)],
      });
      this.child = child;
      if (s.statusFd !== undefined) (child.stdio[s.statusFd] as Readable | null)?.on("error", () => undefined).resume();
      const fd3 = child.stdio[3] as Writable | null | undefined;
      if (s.fd3 && fd3) {
        fd3.on("error", () => undefined); // a sandbox that died first closed it
        fd3.end(s.fd3);
      }
      child.on("error", (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.on("spawn", () => resolve());
      const holds = s.holds;
      const unwatch = holds?.watch(() => {
        const lost = holds.lost();
        if (lost.length)
          this.stop(
            `its sandbox no longer held ${lost.join(", ")}: replaced or removed from outside (an editor's save, ` +
              `git's lock file), which takes the sandbox's mount off it; it starts again, held afresh, at the next call`,
          );
      });
      child.on("close", () => {
        unwatch?.();
        this.child = undefined;
        this.buffer.clear();
        void s.cleanup?.().catch(() => undefined); // a cgroup still emptying is removed at latch's next start
        this.closed();
      });
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stderr?.on("data", (c: Buffer) => s.onStderr(c));
      child.stdout?.on("data", (chunk: Buffer) => {
        if (this.ended) return; // stopped: what it still sends is dropped, not buffered
        try {
          this.buffer.append(chunk);
        } catch {
          this.stop(`it sent a message over ${s.maxMessageBytes} bytes (mcp_servers max_message_bytes)`);
          return;
        }
        for (;;) {
          let msg: JSONRPCMessage | null;
          try {
            msg = this.buffer.readMessage();
          } catch (err) {
            this.onerror?.(new Error(`the server wrote a line that is not JSON-RPC: ${(err as Error).message}`));
            continue;
          }
          if (msg === null) break;
          this.onmessage?.(msg);
        }
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return reject(new Error("the server is not running"));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  private ended = false;

  /** The connection is over (once): the client fails what waits on it at once, not when the process is gone. */
  private closed(): void {
    if (this.ended) return;
    this.ended = true;
    this.onclose?.();
  }

  /** Stop the server's whole process group: SIGTERM, then SIGKILL after a grace. */
  stop(why: string): void {
    const child = this.child;
    if (!child?.pid) return;
    this.stoppedBecause ??= why;
    this.closed();
    const group = -child.pid;
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(group, sig);
      } catch {
        // already gone
      }
    };
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), STOP_GRACE_MS);
    timer.unref();
    child.once("close", () => clearTimeout(timer));
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const closed = new Promise<void>((r) => child.once("close", () => r()));
    child.stdin?.end();
    this.stop("latch closed the connection");
    await closed;
  }
}
