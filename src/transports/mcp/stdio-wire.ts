// The stdio wire: newline-delimited JSON-RPC on stdin/stdout, in place of the SDK's transport, which
// drops what it cannot parse without an answer, exits silently past 10 MiB and lets an EPIPE crash
// the process. Here every request gets an answer (the spec's -32700, -32600 and -32602, with short
// messages), a line over MAX_MESSAGE_BYTES is skipped and answered, a call past its tool's argument
// limit is answered from its bytes without being decoded (call-size.ts), and a broken or closed stream
// is reported once through `onfault`, for the server to shut down cleanly.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { overLimit, type ArgumentLimits } from "./call-size.js";
import { nestsDeeper, TOO_DEEP } from "./depth.js";
import { openStdinReader, type StdinReader } from "./stdin-reader.js";

/** The longest message read from stdin (documented in docs/clients.md); longer lines are refused. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const KEEP_ENDS = 256;
/** The smallest line buffer made (a pipe's read is at most this). */
const READ_BYTES = 64 * 1024;
/** The line buffer is kept for the next message up to this size; a longer message's is let go. */
const KEEP_LINE_BYTES = 2 * 1024 * 1024;

type In = NodeJS.ReadableStream & { destroyed?: boolean };
const MAX_DETAIL = 200;

interface Schema {
  safeParse(v: unknown): { success: boolean; error?: unknown; data?: unknown };
}

/**
 * The SDK's schemas a message is checked against before the SDK's Protocol sees it (wire-checks.ts):
 * given once the SDK is loaded, since the stdio server reads, and answers its first messages, before.
 */
export interface WireChecks {
  /** Any JSON-RPC message. */
  message: Schema;
  /** Requests whose params are checked here, so a bad one is -32602 with a short reason. */
  params: Record<string, Schema>;
}

type Id = string | number | null;

/** fd 0 as the command's entry opened and read it before the program loaded (answer-cache.ts). */
export interface AdoptedStdin {
  reader?: StdinReader;
  /** What it read and did not answer, in order (copies: the reader's buffer is reused). */
  pending: Buffer[];
  /** stdin failed while the program loaded. */
  failed?: Error;
  /**
   * stdin ended before the wire listened: the entry's handle saw the end (a socket on fd 0 that reads
   * through `onread` emits it at once, resumed or not, and is then destroyed).
   */
  ended?: boolean;
  /** stdout failed while the entry answered or the program loaded. */
  outFailed?: Error;
}

export class StdioWire implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** The client is gone or a stream broke: called once, with why. */
  onfault?: (why: string, broken: boolean) => void;
  /** Sees each parsed message first; true: it took the message (direct-calls.ts), which goes no further. */
  intercept?: (message: Record<string, unknown>) => boolean;
  /** Set before a message goes past `intercept` (until then, `intercept` takes every one). */
  checks?: WireChecks;

  /** The message being read: one buffer, grown by doubling, its first `size` bytes used. */
  private line = Buffer.alloc(0);
  private size = 0;
  private stdin: In | undefined;
  /** A line past the limit, being skipped to its end: its size and its ends (where an id may be). */
  private skipping: { bytes: number; head: Buffer; tail: Buffer } | undefined;
  private faulted = false;
  /** A stream broke: nothing more is written. A clean end of stdin leaves stdout open for the last answers. */
  private muted = false;
  private closed = false;

  constructor(
    /** Where messages come from; default stdin, read into a reused buffer when it is a pipe or a socket. */
    private readonly input: In | undefined = undefined,
    private readonly stdout: NodeJS.WritableStream & { destroyed?: boolean; writable?: boolean } = process.stdout,
    /** The tools' argument limits (ToolSpec.argumentLimit), checked on a call's bytes. */
    private readonly limits?: ArgumentLimits,
  ) {}

  /**
   * Starts reading. `adopted`: fd 0 as the command's entry opened it (answer-cache.ts), with the bytes
   * it read and did not answer, taken first, in order, and a failure of stdin or stdout meanwhile.
   */
  async start(adopted?: AdoptedStdin): Promise<void> {
    if (this.stdin) return; // already reading (the stdio server starts it before the SDK connects)
    const pipe = this.input ? undefined : (adopted?.reader ?? openStdinReader());
    if (pipe) pipe.sink = this.onData;
    // process.stdin is touched only when not read through `pipe`: two handles on fd 0 would race.
    const stdin: In = pipe?.socket ?? this.input ?? process.stdin;
    this.stdin = stdin;
    if (!pipe) stdin.on("data", this.onData);
    stdin.on("end", this.onEnd);
    stdin.on("error", this.onInError);
    stdin.resume();
    this.stdout.on("error", this.onOutError);
    for (const chunk of adopted?.pending ?? []) this.onData(chunk);
    if (adopted?.failed) this.onInError(adopted.failed);
    if (adopted?.outFailed) this.onOutError(adopted.outFailed);
    if (adopted?.ended) this.onEnd(); // after what was read before it, as an end read now
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || this.muted || this.stdout.destroyed || this.stdout.writable === false) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.stdout.write(JSON.stringify(message) + "\n")) return resolve();
      const done = () => {
        this.stdout.off("drain", done);
        this.stdout.off("close", done);
        resolve();
      };
      this.stdout.once("drain", done);
      this.stdout.once("close", done); // a broken stdout is reported through onfault
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin?.off("data", this.onData);
    this.stdin?.off("end", this.onEnd);
    this.stdin?.pause();
    this.line = Buffer.alloc(0);
    this.size = 0;
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.closed) return;
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(10, from);
      this.take(chunk.subarray(from, nl === -1 ? chunk.length : nl));
      if (nl === -1) return;
      this.endLine();
      from = nl + 1;
    }
  };

  private readonly onEnd = (): void => this.fault("the client closed stdin", false);
  private readonly onInError = (err: Error): void => this.fault(`stdin failed (${describeErr(err)})`, true);
  private readonly onOutError = (err: Error): void =>
    this.fault(`stdout failed (${describeErr(err)}): the client stopped reading`, true);

  private fault(why: string, broken: boolean): void {
    if (broken) this.muted = true; // also after a clean end of stdin: the client's stdout went too
    if (this.faulted) return;
    this.faulted = true;
    this.onfault?.(why, broken);
  }

  private take(part: Buffer): void {
    if (this.skipping) {
      this.skipping.bytes += part.length;
      this.skipping.tail = lastBytes([this.skipping.tail, part]);
      return;
    }
    const size = this.size + part.length;
    if (size <= MAX_MESSAGE_BYTES) {
      if (size > this.line.length) {
        // Doubling: a message of n bytes costs under 2n of copying, and no list of chunks to join.
        const grown = Buffer.allocUnsafe(Math.min(MAX_MESSAGE_BYTES, Math.max(size, 2 * this.line.length, READ_BYTES)));
        this.line.copy(grown, 0, 0, this.size);
        this.line = grown;
      }
      part.copy(this.line, this.size);
      this.size = size;
      return;
    }
    const all = [this.line.subarray(0, this.size), part];
    this.skipping = { bytes: size, head: firstBytes(all), tail: lastBytes(all) };
    this.dropLine();
  }

  /** The line was handled: its bytes are forgotten, and a large buffer let go. */
  private dropLine(): void {
    this.size = 0;
    if (this.line.length > KEEP_LINE_BYTES) this.line = Buffer.alloc(0);
  }

  private endLine(): void {
    const skipped = this.skipping;
    if (skipped) {
      this.skipping = undefined;
      const id = idAtEnds(skipped.head.toString("latin1"), skipped.tail.toString("latin1"));
      const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
      this.reply(
        id,
        -32600,
        `Invalid Request: the message is ${mib(skipped.bytes)}, over latch's limit of ${mib(MAX_MESSAGE_BYTES)} for one stdio message, so it was not read. Send less per call: split a large write into several smaller write_file or edit_file calls.`,
      );
      return;
    }
    const buf = this.line.subarray(0, this.size);
    const over = overLimit(buf, this.limits);
    // Decoded before the buffer is reused: the line is a string from here on.
    let line = over ? "" : buf.toString("utf8");
    this.dropLine();
    if (over) return this.reply(over.id, -32602, over.message);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() !== "") this.handle(line);
  }

  private handle(line: string): void {
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (err) {
      this.reply(null, -32700, `Parse error: the message is not valid JSON (${cut((err as Error).message)}).`);
      return;
    }
    if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
      this.reply(null, -32600, "Invalid Request: a message is one JSON-RPC object (batches are not accepted).");
      return;
    }
    const o = obj as Record<string, unknown>;
    const id: Id | undefined = typeof o.id === "string" || typeof o.id === "number" ? o.id : undefined;
    if (nestsDeeper(obj)) {
      if (id === undefined) this.onerror?.(new Error("a notification nested too deep"));
      else this.reply(id, -32602, TOO_DEEP);
      return;
    }
    if (this.intercept?.(o)) return;
    this.dispatch(o);
  }

  /** A message no intercept took, to the SDK's Protocol if its schemas pass it, else answered with why not. */
  dispatch(o: Record<string, unknown>): void {
    if (!this.checks) throw new Error("latch: a message reached the stdio wire's checks before they were given");
    const id: Id | undefined = typeof o.id === "string" || typeof o.id === "number" ? o.id : undefined;
    const parsed = this.checks.message.safeParse(o);
    if (!parsed.success) {
      const named = o.jsonrpc === "2.0" && typeof o.method === "string";
      const branch = "id" in o ? 0 : 1;
      if (named && "id" in o && id === undefined) {
        this.reply(null, -32600, "Invalid Request: `id` must be a string or a number.");
      } else if (named && onlyParams(parsed.error, branch)) {
        if (id === undefined) this.onerror?.(new Error(`a notification with bad params: ${cut(String(o.method))}`));
        else this.reply(id, -32602, `Invalid params: ${describe(parsed.error, branch)}`);
      } else {
        this.reply(id ?? null, -32600, `Invalid Request: ${describe(parsed.error, branch)}`);
      }
      return;
    }
    const msg = parsed.data as JSONRPCMessage;
    if ("method" in msg && "id" in msg) {
      const check = this.checks.params[msg.method]?.safeParse(msg);
      if (check && !check.success) {
        this.reply(msg.id, -32602, `Invalid params for ${msg.method}: ${describe(check.error)}`);
        return;
      }
    }
    this.onmessage?.(msg);
  }

  private reply(id: Id, code: number, message: string): void {
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

interface Issue {
  path?: PropertyKey[];
  message?: string;
}

/** The issues of a parse; of a union (the JSON-RPC message kinds), those of the kind meant: a request (0) or a notification (1). */
function issuesOf(error: unknown, branch = 0): Issue[] {
  return ((error as { issues?: Issue[] } | undefined)?.issues ?? []).flatMap((i) => {
    const branches = (i as { errors?: Issue[][] }).errors;
    return branches?.length ? (branches[branch] ?? branches[0] ?? []) : [i];
  });
}

function onlyParams(error: unknown, branch: number): boolean {
  const issues = issuesOf(error, branch);
  return issues.length > 0 && issues.every((i) => i.path?.[0] === "params");
}

/** The first problem, as `where: what`, short. */
function describe(error: unknown, branch = 0): string {
  const issue = issuesOf(error, branch)[0];
  if (!issue) return "the message does not have the shape of a JSON-RPC 2.0 message.";
  const where = (issue.path ?? []).map(String).join(".") || "the message";
  return cut(`\`${where}\`: ${issue.message ?? "invalid"}`);
}

function cut(s: string): string {
  return s.length > MAX_DETAIL ? `${s.slice(0, MAX_DETAIL)}…` : s;
}

function describeErr(err: Error): string {
  return (err as { code?: string }).code ?? err.message;
}

function firstBytes(parts: Buffer[]): Buffer {
  return Buffer.concat(
    parts,
    Math.min(
      KEEP_ENDS,
      parts.reduce((n, p) => n + p.length, 0),
    ),
  );
}

function lastBytes(parts: Buffer[]): Buffer {
  const out: Buffer[] = [];
  let need = KEEP_ENDS;
  for (let i = parts.length - 1; i >= 0 && need > 0; i--) {
    const p = parts[i];
    out.unshift(p.length > need ? p.subarray(p.length - need) : p);
    need -= Math.min(need, p.length);
  }
  return Buffer.from(Buffer.concat(out)); // a copy: the stream's chunk is not held
}

/** The id of a message too long to parse: a member at its start (`{"jsonrpc":"2.0","id":7,…`) or its end (`…,"id":7}`). */
function idAtEnds(head: string, tail: string): Id {
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.){0,100}")`;
  const atEnd = new RegExp(String.raw`"id"\s*:\s*${value}\s*}\s*$`).exec(tail.replace(/\r$/, ""));
  const atStart = new RegExp(String.raw`^\s*{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}`).exec(head);
  const raw = atEnd?.[1] ?? atStart?.[1];
  if (raw === undefined) return null;
  try {
    return JSON.parse(raw) as string | number;
  } catch {
    return null; // not a JSON string after all: the answer goes to id null
  }
}
