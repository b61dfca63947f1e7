// The client shape's files: read and written through the ACP client (fs/read_text_file and
// fs/write_text_file), so the model sees the editor's unsaved buffers and the editor shows every change.
import type { AgentContext } from "@agentclientprotocol/sdk";
import { ToolError } from "../../errors.js";
import type { FileBackend } from "../../fs/backend.js";

/** JSON-RPC's "resource not found" in ACP: the client's answer for a file that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

export function acpFiles(client: AgentContext, sessionId: string): FileBackend {
  return {
    kind: "client",
    async read(target, signal) {
      try {
        const r = await client.request(
          "fs/read_text_file",
          { sessionId, path: target.abs },
          { cancellationSignal: signal },
        );
        return Buffer.from(r.content, "utf8");
      } catch (err) {
        if (codeOf(err) === RESOURCE_NOT_FOUND) return null;
        throw new ToolError(
          "ECLIENT",
          `The editor could not read \`${target.rel}\`: ${messageOf(err)}. Check the file in the editor, then retry.`,
        );
      }
    },
    async write(target, bytes, signal, beforeCommit) {
      await beforeCommit?.();
      try {
        await client.request(
          "fs/write_text_file",
          { sessionId, path: target.abs, content: bytes.toString("utf8") },
          { cancellationSignal: signal },
        );
        return {};
      } catch (err) {
        throw new ToolError(
          "ECLIENT",
          `The editor refused to write \`${target.rel}\` (${messageOf(err)}); nothing is recorded as written. Check the file in the editor, then retry.`,
        );
      }
    },
  };
}

function codeOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
