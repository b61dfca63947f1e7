// The stdio wire: newline-delimited JSON-RPC on stdin/stdout, in place of the SDK's transport, which
// drops what it cannot parse without an answer, exits silently past 10 MiB and lets an EPIPE crash
// the process. Here every request gets an answer (the spec's -32700, -32600 and -32602, with short
// messages), a line over MAX_MESSAGE_BYTES is skipped and answered, and a broken or closed stream is
// reported once through `onfault`, for the server to shut down cleanly.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { nestsDeeper, TOO_DEEP } from "./depth.js";

/** The longest message read from stdin (documented in docs/clients.md); longer lines are refused. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const KEEP_ENDS = 256;
const MAX_DETAIL = 200;

/** Requests whose params are checked here, so a bad one is -32602 with a short reason. */
const PARAMS: Record<string, { safeParse(v: unknown): { success: boolean; error?: unknown } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
};

type Id = string | number | null;

export class StdioWire implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** The client is gone or a stream broke: called once, with why. */
  onfault?: (why: string, broken: boolean) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** A line past the limit, being skipped to its end: its size and its ends (where an id may be). */
  private skipping: { bytes: number; head: Buffer; tail: Buffer } | undefined;
  private faulted = false;
  private closed = false;

  constructor(
    private readonly stdin: NodeJS.ReadableStream & { destroyed?: boolean } = process.stdin,
    private readonly stdout: NodeJS.WritableStream & { destroyed?: boolean; writable?: boolean } = process.stdout,
  ) {}

  async start(): Promise<void> {
    this.stdin.on("data", this.onData);
    this.stdin.on("end", this.onEnd);
    this.stdin.on("error", this.onInError);
    this.stdout.on("error", this.onOutError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || this.faulted || this.stdout.destroyed || this.stdout.writable === false)
      return Promise.resolve();
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
    this.stdin.off("data", this.onData);
    this.stdin.off("end", this.onEnd);
    this.stdin.pause();
    this.chunks = [];
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer): void => {
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
    if (this.size + part.length <= MAX_MESSAGE_BYTES) {
      if (part.length > 0) this.chunks.push(part);
      this.size += part.length;
      return;
    }
    const all = [...this.chunks, part];
    this.skipping = { bytes: this.size + part.length, head: firstBytes(all), tail: lastBytes(all) };
    this.chunks = [];
    this.size = 0;
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
    const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    let line = buf.toString("utf8");
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
    const parsed = JSONRPCMessageSchema.safeParse(obj);
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
    const msg = parsed.data;
    if ("method" in msg && "id" in msg) {
      const check = PARAMS[msg.method]?.safeParse(msg);
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
