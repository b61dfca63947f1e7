// latch mcp over stdio: one client, one ledger session. Without --root, the first root the client
// offers (MCP roots) becomes the workspace, else the current folder.
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Host } from "../../host/create-host.js";
import { log } from "../log.js";
import { createMcpSession } from "./server.js";

export interface StdioOptions {
  /** Makes a host for a root; called at once for the given or current folder (so a bad config stops startup). */
  makeHost(root?: string): Promise<Host>;
  /** Whether --root was given: then the client's roots are not asked for. */
  explicitRoot: boolean;
  approveAll?: boolean;
}

export async function serveStdio(opts: StdioOptions): Promise<void> {
  const first = await opts.makeHost();
  let settle!: (h: Host | Promise<Host>) => void;
  const host = new Promise<Host>((resolve) => (settle = resolve));
  if (opts.explicitRoot) settle(first);
  const server = createMcpSession({
    host,
    session: `mcp-stdio-${randomUUID()}`,
    approveAll: opts.approveAll,
    onInitialized: (srv) => {
      if (!opts.explicitRoot) settle(hostForClientRoot(srv, first, opts));
    },
  });
  const transport = new StdioServerTransport();
  transport.onclose = () => {
    host.then((h) => h.close()).catch(() => undefined); // closing is best effort at exit
  };
  await server.connect(transport);
  // The client closing stdin (or a signal) ends the run: the host closes, so the policy log gets its
  // run_finished line. The SDK's stdio transport does not watch for the end of stdin itself.
  const stop = () => void transport.close();
  process.stdin.once("end", stop);
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.once(sig, () => void transport.close().finally(() => process.exit(0)));
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
