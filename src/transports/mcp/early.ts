// The stdio server's first answers, given before the MCP SDK is loaded: evaluating the SDK's protocol
// schemas and checking the first messages with them took ~12 ms of every `latch mcp` start, spent
// before the client's initialize and tools/list were answered (bench/RESULTS.md, `start`). Here a
// plain initialize and a plain tools/list (checked by hand: only shapes the SDK's schemas pass) are
// answered as the SDK's Server would answer them; every other message is held, in order, and the SDK
// loads (stdio-sdk.ts), takes in the initialize (the client's capabilities) and serves what was held.
// It loads right after the first tools/list is taken, at the first message only it can serve, or
// shortly after initialize, whichever comes first; `notifications/initialized` alone does not call for
// it, since a client sends tools/list right after it.
import type { JSONRPCMessage, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { initializeResult } from "./handshake.js";
import { instructionsFor } from "./instructions.js";
import { plainInitialize, plainListTools } from "./plain.js";
import { errorOf } from "./rpc.js";
import { listTools } from "./tool-list.js";

/** After the initialize answer, the SDK loads at the latest this long after (ms), tools/list or not. */
const LOAD_AFTER_INITIALIZE_MS = 25;

export interface EarlyOptions {
  host: Host;
  session: string;
  /** The roots come from the client (stdio without --root): the instructions say how, as server.ts's. */
  clientRoots: boolean;
  send(message: JSONRPCMessage): Promise<void>;
  /** The SDK is needed now: load it and call handOver(). Called once at most. */
  need(): void;
  /** What the command's entry answered before the program loaded (answer-cache.ts). */
  answered?: { initialize?: Message; held: Message[]; listed: boolean };
  /** Told the tools a tools/list here answered with. */
  onListed?(tools: Tool[]): void;
}

type Message = Record<string, unknown>;

export class EarlyAnswers {
  private readonly held: Message[] = [];
  private initialize: Message | undefined;
  private needed = false;
  private timer: NodeJS.Timeout | undefined;
  private handedOver = false;
  /** A tools/list answered here, and the config reloaded since (watch-config.ts): the client must list again. */
  private listed = false;
  private reloaded = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly opts: EarlyOptions) {
    this.unsubscribe = opts.host.onReload(() => (this.reloaded = true));
    const before = opts.answered;
    if (before?.initialize) {
      this.initialize = before.initialize;
      for (const item of before.held) this.held.push(item);
      this.listed = before.listed;
      // As after answering them here: the SDK loads once the tools are listed, or shortly after initialize.
      if (before.listed) setImmediate(() => this.callForSdk());
      else this.timer = setTimeout(() => this.callForSdk(), LOAD_AFTER_INITIALIZE_MS);
    }
  }

  /** The tools a tools/list was answered with (the entry's, from an earlier start) are not this start's. */
  listedStale(): void {
    this.reloaded = true;
  }

  /** Takes every message until handOver(): answers it here, or holds it for the SDK. */
  take(m: Message): true {
    if (this.handedOver) throw new Error("latch: a message reached the early answers after the SDK took over");
    if (!this.initialize && !this.needed && plainInitialize(m)) {
      this.initialize = m;
      const id = m.id as string | number;
      try {
        this.answer(id, this.initializeResult(m.params as Message));
      } catch (err) {
        this.fail(id, err); // as the SDK answers its handler's throw (the capabilities are still taken in)
      }
      this.timer = setTimeout(() => this.callForSdk(), LOAD_AFTER_INITIALIZE_MS);
      return true;
    }
    if (!this.needed && plainListTools(m)) {
      const id = m.id as string | number;
      this.listed = true;
      listTools(this.opts.host, this.opts.session).then(
        (tools) => {
          this.answer(id, { tools });
          this.opts.onListed?.(tools);
        },
        (err: unknown) => this.fail(id, err),
      );
      // The SDK's load, which holds the thread for a few ms, waits a turn: the answer goes out first,
      // unless a skill folder makes the skill index a call (tool-list.ts), which the load then overlaps.
      setImmediate(() => this.callForSdk());
      return true;
    }
    this.held.push(m);
    if (m.method !== "notifications/initialized") this.callForSdk();
    return true;
  }

  /**
   * What the SDK takes over: the initialize answered here (if any), the messages held, in order, and
   * whether a tools/list answered here may be out of date (the SDK then sends tools/list_changed).
   */
  handOver(): { initialize: Message | undefined; held: Message[]; listChanged: boolean } {
    this.handedOver = true;
    clearTimeout(this.timer);
    this.unsubscribe();
    return { initialize: this.initialize, held: this.held.splice(0), listChanged: this.listed && this.reloaded };
  }

  /** As the SDK's Server answers, with server.ts's instructions (the host is made before any message). */
  private initializeResult(params: Message): Record<string, unknown> {
    const { host, clientRoots } = this.opts;
    return initializeResult(params.protocolVersion as string, instructionsFor(host, clientRoots));
  }

  private answer(id: string | number, result: Record<string, unknown>): void {
    void this.opts.send({ jsonrpc: "2.0", id, result });
  }

  private fail(id: string | number, err: unknown): void {
    void this.opts.send({ jsonrpc: "2.0", id, error: errorOf(err) });
  }

  private callForSdk(): void {
    if (this.needed) return;
    this.needed = true;
    clearTimeout(this.timer);
    this.opts.need();
  }
}
