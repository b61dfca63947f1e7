// The stdio wire's checks (stdio-wire.ts): the SDK's schemas, loaded with the SDK, not at start.
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { WireChecks } from "./stdio-wire.js";

export const WIRE_CHECKS: WireChecks = {
  message: JSONRPCMessageSchema,
  params: {
    initialize: InitializeRequestSchema,
    ping: PingRequestSchema,
    "tools/list": ListToolsRequestSchema,
    "tools/call": CallToolRequestSchema,
  },
};
