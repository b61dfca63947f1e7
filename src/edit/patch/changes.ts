// A parsed patch over the current bytes of its files: the file changes to commit all together, and
// what to tell the model about each file. Pure, so the approval preview and the write agree.
import { ToolError } from "../../errors.js";
import type { Currents, FileChange } from "../changeset.js";
import type { ResolvedPath } from "../../fs/paths.js";
import { decodeExact } from "../replace.js";
import { applyChunks, type LooseMatch } from "./locate.js";
import { addedContent } from "./parse.js";
import type { FileOp } from "./types.js";
import { showName } from "../../fs/names.js";

export interface ResolvedOp {
  op: FileOp;
  target: ResolvedPath;
  /** `*** Move to:` or a unified rename. */
  dest?: ResolvedPath;
}

export interface FileReport {
  path: string;
  action: "add" | "update" | "delete" | "move";
  to?: string;
  chunks?: number;
  /** Chunks placed by a looser match than exact lines: what the model should fix next time. */
  loose?: LooseMatch[];
}

export function patchChanges(ops: ResolvedOp[], currents: Currents): { changes: FileChange[]; report: FileReport[] } {
  const changes: FileChange[] = [];
  const report: FileReport[] = [];
  for (const { op, target, dest } of ops) {
    const before = currents.get(target.abs) ?? null;
    if (op.kind === "add") {
      changes.push({ target, after: Buffer.from(addedContent(op.lines, op.noEol), "utf8"), needs: "full" });
      report.push({ path: showName(target.rel), action: "add" });
      continue;
    }
    if (before === null)
      throw new ToolError(
        "ENOENT",
        `\`${target.rel}\` does not exist, so it cannot be ${op.kind === "delete" ? "deleted" : "updated"}; no file was changed. ` +
          "Check the path with find_files, or add the file with `*** Add File:`.",
      );
    if (op.kind === "delete") {
      changes.push({ target, after: null, needs: "range" });
      report.push({ path: showName(target.rel), action: "delete" });
      continue;
    }
    const applied = applyChunks(decodeExact(before, target), op.chunks, op.format, target.rel);
    const after = Buffer.from(applied.text, "utf8");
    const loose = applied.loose.length > 0 ? { loose: applied.loose } : {};
    if (dest && dest.abs !== target.abs) {
      changes.push({ target: dest, after, needs: "full", markerFrom: target });
      changes.push({ target, after: null, needs: "range" });
      report.push({
        path: showName(target.rel),
        action: "move",
        to: showName(dest.rel),
        chunks: op.chunks.length,
        ...loose,
      });
    } else {
      changes.push({ target, after, needs: "range" });
      report.push({ path: showName(target.rel), action: "update", chunks: op.chunks.length, ...loose });
    }
  }
  return { changes, report };
}
