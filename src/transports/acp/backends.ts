// acpClient(): what createHost({shape: "client", acp}) needs from an ACP connection, chosen by the
// capabilities the client announced at initialize. A tool whose capability is missing is not offered.
import type { AgentContext, ClientCapabilities } from "@agentclientprotocol/sdk";
import type { ClientBackends } from "../../host/client.js";
import type { ClientCapability } from "../../tools/define.js";
import { acpApprover } from "./approver.js";
import { acpFiles } from "./files.js";
import { acpProcesses } from "./terminal.js";

export function acpClient(
  client: AgentContext,
  sessionId: string,
  capabilities: ClientCapabilities | undefined,
): ClientBackends {
  const offers: ClientCapability[] = [];
  if (capabilities?.fs?.readTextFile) offers.push("read");
  if (capabilities?.fs?.writeTextFile) offers.push("write");
  if (capabilities?.terminal) offers.push("terminal");
  return {
    files: acpFiles(client, sessionId),
    ...(capabilities?.terminal ? { processes: acpProcesses(client, sessionId) } : {}),
    approver: acpApprover(client, sessionId),
    offers,
  };
}
