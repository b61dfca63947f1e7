// The stdio server's MCP SDK part, loaded once the first answers are out (early.ts): the SDK's Server
// over the wire, tools/call served directly (direct-calls.ts), and the client's roots followed.
import { fileURLToPath } from "node:url";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { RootsListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { isInside } from "../../fs/paths.js";
import { log } from "../log.js";
import { createMcpSession } from "./server.js";
import { DirectCalls } from "./direct-calls.js";
import type { EarlyAnswers } from "./early.js";
import type { StdioWire } from "./stdio-wire.js";
import { WIRE_CHECKS } from "./wire-checks.js";

export interface SdkOptions {
  host: Host;
  session: string;
  wire: StdioWire;
  early: EarlyAnswers;
  /** Whether --root was given: then the client's roots are not served. */
  explicitRoot: boolean;
  approveAll?: boolean;
  /** Told the tools a tools/list the SDK answered listed (the first is kept for the next start). */
  onListed?: (tools: Tool[]) => void;
}

/** The SDK's part, as the stdio server's stop needs it. */
export interface SdkSession {
  /** Resolves once none of the client's tools/call is running, or after `waitMs`. */
  callsEnded(waitMs: number): Promise<void>;
  /** The client closed stdin: what latch asks it (its roots) is not answered now; nothing waits for it. */
  clientGone(): void;
}

/** Puts the SDK's session on the wire and hands it what the early answers took: from here it serves all. */
export async function attachSdk(opts: SdkOptions): Promise<SdkSession> {
  const { host, wire } = opts;
  const gone = new AbortController();
  // The roots in force: calls wait for the client's roots (after initialized) and for each change; a
  // call before initialized waits for the first listing, or for the client to leave.
  let rootsKnown!: () => void;
  let initialized = false;
  let roots: Promise<void> = opts.explicitRoot ? Promise.resolve() : new Promise<void>((r) => (rootsKnown = r));
  const { server, callTool, adoptInitialize, callsEnded } = createMcpSession({
    host,
    session: opts.session,
    approveAll: opts.approveAll,
    rootsSettled: () => roots,
    clientRoots: !opts.explicitRoot,
    onListed: opts.onListed,
    onInitialized: (srv) => {
      if (opts.explicitRoot) {
        void warnOutsideRoot(srv, host, gone.signal);
        return;
      }
      initialized = true;
      roots = followRoots(srv, host, true, gone.signal);
      void roots.then(rootsKnown);
      srv.setNotificationHandler(RootsListChangedNotificationSchema, () => {
        const before = roots;
        roots = before.then(() => followRoots(srv, host, false, gone.signal));
      });
    },
  });
  const direct = new DirectCalls(callTool, (m) => wire.send(m));
  wire.checks = WIRE_CHECKS;
  await server.connect(wire); // the wire reads already: its start() is then a no-op
  // Synchronous from here to the switch: a message read meanwhile cannot pass the ones held.
  const { initialize, held, listChanged } = opts.early.handOver();
  if (initialize && !adoptInitialize(initialize))
    log(
      "warn",
      "the client's initialize, answered at start, is refused by the SDK's schema: its capabilities are not known",
    );
  for (const m of held) if (!direct.take(m)) wire.dispatch(m);
  wire.intercept = (m) => direct.take(m);
  if (listChanged)
    server.sendToolListChanged().catch((err: Error) => log("debug", `tools/list_changed not sent: ${err.message}`));
  return {
    callsEnded,
    clientGone: () => {
      gone.abort(); // the first listing, if under way, then ends and settles `roots` itself
      if (!initialized) rootsKnown?.();
    },
  };
}

/** The client's file:// roots as folders; undefined when it offers none, does not answer, or left. */
async function clientRoots(server: Server, gone: AbortSignal): Promise<string[] | undefined> {
  if (!server.getClientCapabilities()?.roots || gone.aborted) return undefined;
  try {
    const { roots } = await server.listRoots(undefined, { timeout: 5000, signal: gone });
    return roots.filter((r) => r.uri.startsWith("file://")).map((r) => fileURLToPath(r.uri));
  } catch (err) {
    if (!gone.aborted) log("warn", `the client offered roots but did not list them (${(err as Error).message})`);
    return undefined;
  }
}

/**
 * Serve the client's roots. At start, a client without roots (or whose roots all fail) leaves the
 * current folder served; after a change, exactly what the client offers is served, even nothing.
 */
async function followRoots(server: Server, host: Host, atStart: boolean, gone: AbortSignal): Promise<void> {
  const folders = await clientRoots(server, gone);
  if (folders === undefined || (atStart && folders.length === 0)) return;
  const startFolder = host.workspace;
  const { served, refused } = await host.serveRoots(folders);
  for (const r of refused) log("warn", `the client's root ${r.folder} is not served: ${r.why}`);
  if (atStart && served.length === 0) {
    await host.serveRoots([startFolder]);
    log("warn", `none of the client's roots can be served; serving ${startFolder}`);
    return;
  }
  const names = served.map((s) => s.root).join(", ") || "no folder";
  log("info", `${atStart ? "roots from the client" : "the client's roots changed"}: serving ${names}`);
  // The model sees the instructions only at initialize: a client that shows log messages sees the change.
  if (!atStart)
    server
      .sendLoggingMessage({ level: "info", logger: "latch", data: `latch now serves: ${names}` })
      .catch(() => undefined); // a client that takes no log messages still has the roots it chose
}

/** With --root: the client's roots are not served; those outside the operator's folder are named. */
async function warnOutsideRoot(server: Server, host: Host, gone: AbortSignal): Promise<void> {
  const folders = (await clientRoots(server, gone)) ?? [];
  for (const f of folders.filter((f) => !isInside(host.workspace, f)))
    log("warn", `the client's root ${f} is not served: --root ${host.workspace} was given, and it lies outside`);
}
