// The library: `import { createHost } from "latch"`.
export { createHost, type Host, type HostOptions } from "./host/create-host.js";
export type { CallOptions, CallResult, Decision, Explanation, Action, GateAction, Prepared } from "./host/types.js";
export type { GivenApproval } from "./approval/prepared.js";
export {
  denyApprover,
  yesApprover,
  type Approver,
  type ApprovalRequest,
  type ApprovalAnswer,
} from "./approval/approver.js";
export { TOOLS, findTool, inputSchema } from "./registry.js";
export type { ToolSpec, Axis, Shape, Annotations, Progress } from "./tools/define.js";
export { loadConfig, parseConfig, ConfigError, type Config } from "./config/load.js";
export type { ClientBackends } from "./host/client.js";
export type { FileBackend } from "./fs/backend.js";
export type { ProcessBackend } from "./process/backend.js";
export { acpClient } from "./transports/acp/backends.js";
