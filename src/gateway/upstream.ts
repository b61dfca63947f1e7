// One attached MCP server: the SDK's Client over a transport (a process latch starts, or streamable
// HTTP), connected on demand and again after a crash. Every failure (a start that fails, a crash, a
// timeout, a message too long) comes back as an UpstreamError naming the server and what to do: the
// caller turns it into an error result, never into a call that ran unchecked.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import { LATCH_VERSION } from "../version.js";

/** What a server's tools/list said, one page after another. */
export type UpstreamTool = Tool;

/** A tool as any upstream lists it; an OpenAPI operation also says which request it is (pinned with it). */
export type SourceTool = Tool & { operation?: { method: string; path: string } };

/** What the gateway needs of an upstream: an MCP server (Upstream) or an OpenAPI service. */
export interface Source {
  listTools(): Promise<SourceTool[]>;
  callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  /** The request an OpenAPI operation makes with these arguments (for the effect). */
  requestOf?(tool: string, args: Record<string, unknown>): { method: string; url: string } | undefined;
  close(): Promise<void>;
}

export class UpstreamError extends Error {
  constructor(
    readonly code: "EUPSTREAM" | "ETIMEDOUT",
    message: string,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

/**
 * latch never relies on a server's outputSchema (results pass latch's own bounds and disclosure gate,
 * whatever they claim), so the SDK's Ajv is not loaded to check them: every output is taken as it is.
 */
const TAKE_AS_IS: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** How long connecting (start, initialize, the first tools/list) may take. */
const CONNECT_TIMEOUT_MS = 30_000;
/** The tools/list pages latch reads at most: a server that pages forever is cut off. */
const MAX_PAGES = 50;

export interface UpstreamOptions {
  name: string;
  /** A fresh transport for each connection (a crashed server is started again). */
  transport(): Promise<Transport & { stoppedBecause?: string }>;
  timeoutMs: number;
  /** The server said its tools changed (notifications/tools/list_changed). */
  onListChanged(): void;
  /** The tail of what the server wrote to stderr, for errors. */
  stderrTail?(): string;
}

export class Upstream implements Source {
  private client?: Client;
  private connecting?: Promise<Client>;
  private transport?: Transport & { stoppedBecause?: string };

  constructor(private readonly o: UpstreamOptions) {}

  get name(): string {
    return this.o.name;
  }

  private async connected(): Promise<Client> {
    if (this.client) return this.client;
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    const client = new Client(
      { name: "latch", version: LATCH_VERSION },
      { capabilities: {}, jsonSchemaValidator: TAKE_AS_IS },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.o.onListChanged());
    let transport: Transport & { stoppedBecause?: string };
    try {
      transport = await this.o.transport();
    } catch (err) {
      throw new UpstreamError("EUPSTREAM", `the server \`${this.o.name}\` cannot start: ${(err as Error).message}`);
    }
    client.onclose = () => {
      if (this.client === client) this.client = undefined;
    };
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (err) {
      await transport.close().catch(() => undefined);
      throw this.failure(err, transport, "cannot be reached");
    }
    this.transport = transport;
    this.client = client;
    return client;
  }

  /** Every tool the server lists now (all pages). */
  async listTools(): Promise<UpstreamTool[]> {
    const client = await this.connected();
    const tools: UpstreamTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      let res;
      try {
        res = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.o.timeoutMs });
      } catch (err) {
        throw this.failure(err, this.transport, "failed to list its tools");
      }
      for (const item of res.tools) tools.push(item);
      cursor = res.nextCursor;
      if (!cursor) return tools;
    }
    throw new UpstreamError("EUPSTREAM", `the server \`${this.o.name}\` listed more than ${MAX_PAGES} pages of tools`);
  }

  async callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const client = await this.connected();
    try {
      const res = await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
        timeout: this.o.timeoutMs,
        signal,
      });
      return res as CallToolResult;
    } catch (err) {
      throw this.failure(err, this.transport, `failed on \`${tool}\``);
    }
  }

  private failure(err: unknown, transport: { stoppedBecause?: string } | undefined, what: string): UpstreamError {
    const msg = err instanceof Error ? err.message : String(err);
    // The SDK's own request timeout, by its code: a server's error whose text says "timeout" is its error.
    if (err instanceof McpError && err.code === Number(ErrorCode.RequestTimeout))
      return new UpstreamError(
        "ETIMEDOUT",
        `the server \`${this.o.name}\` did not answer within ${this.o.timeoutMs / 1000} s (timeout_s); nothing more is known of what it did`,
      );
    const stopped = transport?.stoppedBecause ? `; latch stopped it: ${transport.stoppedBecause}` : "";
    const tail = this.o.stderrTail?.().trim();
    const said = tail ? `; its last stderr: ${tail.slice(-300)}` : "";
    return new UpstreamError("EUPSTREAM", `the server \`${this.o.name}\` ${what} (${msg})${stopped}${said}`);
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    await c?.close().catch(() => undefined);
  }
}
