// What latch says of itself at initialize, without the MCP SDK: the stdio server answers the first
// initialize before it loads the SDK (early.ts), and the SDK's Server is made with the same values
// (server.ts). test/transports/early-answers.test.ts holds the versions to the SDK's own lists.
import { LATCH_VERSION } from "../../version.js";

export const SERVER_INFO = { name: "latch", version: LATCH_VERSION };

/** The server's capabilities: tools (their list changes with the config), logging, skills as prompts. */
export const CAPABILITIES = { tools: { listChanged: true }, logging: {}, prompts: { listChanged: false } };

/** The SDK's LATEST_PROTOCOL_VERSION and SUPPORTED_PROTOCOL_VERSIONS. */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";
export const SUPPORTED_PROTOCOL_VERSIONS = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

/** An initialize's result as the SDK's Server gives it, for the requested version and these instructions. */
export function initializeResult(requested: string, instructions: string): Record<string, unknown> {
  return {
    protocolVersion: negotiatedVersion(requested),
    capabilities: CAPABILITIES,
    serverInfo: SERVER_INFO,
    instructions,
  };
}

/** The version answered, as the SDK's Server negotiates it: the client's if supported, else the latest. */
function negotiatedVersion(requested: string): string {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}
