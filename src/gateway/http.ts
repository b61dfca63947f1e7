// A `url` server latch attaches: the MCP SDK's streamable HTTP client transport, every request of it
// through the guarded fetch (src/web/guarded.ts: no private address unless the config names the host,
// no redirect followed past the check, one answer bounded), its headers read from latch's start-up
// environment by reference. The values are secrets of the disclosure gate (Gateway.secrets).
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpServerConfig } from "../config/servers.js";
import { readRefs } from "../config/servers.js";
import { guardedFetch } from "../web/guarded.js";

type HttpServer = Extract<McpServerConfig, { kind: "http" }>;

/** A fresh transport for one connection to the server. */
export function httpTransport(s: HttpServer, env: Readonly<NodeJS.ProcessEnv>): StreamableHTTPClientTransport {
  const headers = readRefs(s.headers, env, `mcp_servers.${s.name}.headers`);
  return new StreamableHTTPClientTransport(new URL(s.url), {
    fetch: guardedFetch({
      table: `[mcp_servers.${s.name}]`,
      privateHosts: s.privateHosts,
      maxBodyBytes: s.maxMessageBytes,
    }),
    requestInit: { headers },
    // A lost event stream is tried again twice, then the next call connects anew (Upstream).
    reconnectionOptions: {
      maxRetries: 2,
      initialReconnectionDelay: 500,
      maxReconnectionDelay: 5000,
      reconnectionDelayGrowFactor: 2,
    },
  });
}
