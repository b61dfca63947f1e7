// latch mcp over stdio: one client, one ledger session. Without --root, the first root the client
// offers (MCP roots) becomes the workspace, else the current folder. The run ends when the client
// closes stdin, when stdout breaks (EPIPE: the client stopped reading) or on SIGTERM/SIGINT; each
// way, the running calls are cancelled, their processes killed and their outcomes logged, and a
// line on stderr says why latch stopped.
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Host } from "../../host/create-host.js";
import { startRun } from "../../host/recover.js";
import { log, reportRecovered } from "../log.js";
import { createMcpSession } from "./server.js";
import { StdioWire } from "./stdio-wire.js";

export interface StdioOptions {
  /** Makes a host for a root; called at once for the given or current folder (so a bad config stops startup). */
  makeHost(root?: string): Promise<Host>;
  /** Whether --root was given: then the client's roots are not asked for. */
  explicitRoot: boolean;
  approveAll?: boolean;
}

export async function serveStdio(opts: StdioOptions): Promise<void> {
  const first = await opts.makeHost();
  const run = startRun(first.state);
  reportRecovered(run.recovered);
  let settle!: (h: Host | Promise<Host>) => void;
  const host = new Promise<Host>((resolve) => (settle = resolve));
  let served: Host | undefined;
  void host.then((h) => (served = h));
  if (opts.explicitRoot) settle(first);
  const server = createMcpSession({
    host,
    session: `mcp-stdio-${randomUUID()}`,
    approveAll: opts.approveAll,
    onInitialized: (srv) => {
      if (!opts.explicitRoot) settle(hostForClientRoot(srv, first, opts));
    },
  });
  const transport = new StdioWire();
  transport.onerror = (err) => log("warn", err.message);
  let stopping = false;
  const stop = async (why: string, code: number, always: boolean) => {
    if (stopping) return;
    stopping = true;
    const hosts = [...new Set([first, served ?? first])];
    const counts = await Promise.all(hosts.map((h) => h.shutdown(why)));
    const n = counts.reduce((a, b) => a + b, 0);
    run.end(); // what calls that did not end in time still hold: temp files, locks, processes
    const line = `${why}; ${n === 0 ? "no call was running" : `${n} running call${n === 1 ? " was" : "s were"} cancelled (logged as interrupted)`}; latch stopped.`;
    log(always || n > 0 ? "error" : "info", line);
    await transport.close();
    process.exit(code);
  };
  transport.onfault = (why, broken) => void stop(why, broken ? 1 : 0, broken);
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => void stop(`${sig} received`, 0, true));
  await server.connect(transport);
  log("info", `serving ${first.root} over stdio`);
}

async function hostForClientRoot(server: Server, fallback: Host, opts: StdioOptions): Promise<Host> {
  if (!server.getClientCapabilities()?.roots) return fallback;
  let root: string | undefined;
  try {
    const { roots } = await server.listRoots(undefined, { timeout: 5000 });
    const uri = roots.find((r) => r.uri.startsWith("file://"))?.uri;
    root = uri ? fileURLToPath(uri) : undefined;
  } catch (err) {
    log("warn", `the client offered roots but did not list them (${(err as Error).message}); using ${fallback.root}`);
  }
  if (!root) return fallback;
  let host: Host;
  try {
    host = await opts.makeHost(root);
  } catch (err) {
    log("warn", `the client's root ${root} cannot be served (${(err as Error).message}); using ${fallback.root}`);
    return fallback;
  }
  fallback.close();
  log("info", `workspace from the client's roots: ${host.root}`);
  return host;
}
