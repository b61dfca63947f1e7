// latch mcp over stdio: one client, one ledger session. Without --root, every folder the client offers
// as an MCP root is served (the first is where relative paths resolve), else the current folder; a
// `notifications/roots/list_changed` is followed at once. With --root, the operator chose the folder:
// the client's roots are not served (those outside it are named on stderr). The run ends when the
// client closes stdin, when stdout breaks (EPIPE: the client stopped reading) or on SIGTERM/SIGINT;
// each way, the running calls are cancelled, their processes killed and their outcomes logged, and a
// line on stderr says why latch stopped.
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Host } from "../../host/create-host.js";
import { isInside } from "../../fs/paths.js";
import { startRun } from "../../host/recover.js";
import { log, reportRecovered } from "../log.js";
import { createMcpSession } from "./server.js";
import { StdioWire } from "./stdio-wire.js";
import { DirectCalls } from "./direct-calls.js";
import { argumentLimits } from "./call-size.js";
import { onStopSignals } from "../stop-signals.js";

export interface StdioOptions {
  /** Makes the host, for the given or current folder (so a bad config stops startup). */
  makeHost(): Promise<Host>;
  /** Whether --root was given: then the client's roots are not served. */
  explicitRoot: boolean;
  approveAll?: boolean;
}

export async function serveStdio(opts: StdioOptions): Promise<void> {
  const host = await opts.makeHost();
  const run = startRun(host.state);
  reportRecovered(run.recovered);
  // The roots in force: calls wait for the client's roots (after initialize) and for each change.
  let roots: Promise<void> = opts.explicitRoot ? Promise.resolve() : new Promise<void>(() => {});
  const { server, callTool } = createMcpSession({
    host,
    session: `mcp-stdio-${randomUUID()}`,
    approveAll: opts.approveAll,
    rootsSettled: () => roots,
    clientRoots: !opts.explicitRoot,
    onInitialized: (srv) => {
      if (opts.explicitRoot) {
        void warnOutsideRoot(srv, host);
        return;
      }
      roots = followRoots(srv, host, true);
      srv.setNotificationHandler(RootsListChangedNotificationSchema, () => {
        const before = roots;
        roots = before.then(() => followRoots(srv, host, false));
      });
    },
  });
  const transport = new StdioWire(
    undefined,
    undefined,
    argumentLimits(() => host.tools()),
  );
  transport.onerror = (err) => log("warn", err.message);
  const direct = new DirectCalls(callTool, (m) => transport.send(m));
  transport.intercept = (m) => direct.take(m);
  let stopping = false;
  const stop = async (why: string, code: number, always: boolean) => {
    if (stopping) return;
    stopping = true;
    const n = await host.shutdown(why);
    run.end(); // what calls that did not end in time still hold: temp files, locks, processes
    const line = `${why}; ${n === 0 ? "no call was running" : `${n} running call${n === 1 ? " was" : "s were"} cancelled (logged as interrupted)`}; latch stopped.`;
    log(always || n > 0 ? "error" : "info", line);
    await transport.close();
    process.exit(code);
  };
  transport.onfault = (why, broken) => void stop(why, broken ? 1 : 0, broken);
  onStopSignals((sig) => void stop(`${sig} received`, 0, true), host, run);
  await server.connect(transport);
  log("info", `serving ${host.root} over stdio`);
}

/** The client's file:// roots as folders; undefined when it offers none or does not answer. */
async function clientRoots(server: Server): Promise<string[] | undefined> {
  if (!server.getClientCapabilities()?.roots) return undefined;
  try {
    const { roots } = await server.listRoots(undefined, { timeout: 5000 });
    return roots.filter((r) => r.uri.startsWith("file://")).map((r) => fileURLToPath(r.uri));
  } catch (err) {
    log("warn", `the client offered roots but did not list them (${(err as Error).message})`);
    return undefined;
  }
}

/**
 * Serve the client's roots. At start, a client without roots (or whose roots all fail) leaves the
 * current folder served; after a change, exactly what the client offers is served, even nothing.
 */
async function followRoots(server: Server, host: Host, atStart: boolean): Promise<void> {
  const folders = await clientRoots(server);
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
async function warnOutsideRoot(server: Server, host: Host): Promise<void> {
  const folders = (await clientRoots(server)) ?? [];
  for (const f of folders.filter((f) => !isInside(host.workspace, f)))
    log("warn", `the client's root ${f} is not served: --root ${host.workspace} was given, and it lies outside`);
}
