// What a host in the client shape gets from its client (an editor over ACP: src/transports/acp):
// the backends its content tools and shell run through, the capabilities the client announced, and
// the client's own way of asking the person.
import type { Approver } from "../approval/approver.js";
import type { ProcessBackend } from "../process/backend.js";
import type { ClientCapability } from "../tools/define.js";
import type { FileBackend } from "../fs/backend.js";

export interface ClientBackends {
  files: FileBackend;
  /** Absent when the client announced no terminal: local_shell is then not offered. */
  processes?: ProcessBackend;
  /** The client's approval request (ACP session/request_permission); the host's approver otherwise. */
  approver?: Approver;
  /** What the client announced: a tool whose clientNeeds are not all here is not offered. */
  offers: readonly ClientCapability[];
}
