import { z } from "zod";
import { ToolError } from "../errors.js";
import { applyAnchoredEdits, precheckAnchors } from "../edit/anchored-edits.js";
import { decodeExact, mutationSummary } from "../edit/replace.js";
import { defineTool, editInPlace, planWrite } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { expectedField } from "./expected.js";
import { showName } from "../fs/names.js";

const edit = () =>
  z.strictObject({
    op: z
      .enum(["replace", "insert_before", "insert_after", "delete"])
      .describe("replace lines pos..end with lines; insert lines before or after pos; delete lines pos..end."),
    pos: z
      .string()
      .describe(
        "Anchor `N#ID` of the line, copied from a read with anchors: true (for inserts: the line to insert next to).",
      ),
    end: z
      .string()
      .optional()
      .describe("replace and delete only: anchor of the last line of the range (default: pos)."),
    lines: z
      .array(z.string())
      .optional()
      .describe(
        "replace and inserts: the new lines, one string per line, without line endings and without the `N#ID|` prefix.",
      ),
  });

const schema = () =>
  z.strictObject({
    path: z.string().describe("File path, relative to the workspace root."),
    edits: z
      .array(edit())
      .min(1)
      .max(500)
      .describe("Edits in the line numbers of your read; all are checked first, then applied together in one write."),
    expected_sha256: expectedField(),
    dry_run: dryRunField(),
  });

export default defineTool({
  name: "hash_edit",
  aliases: ["anchored_edit"],
  toolset: "anchored_edit",
  axis: "files.write",
  shapes: ["workspace", "client"],
  clientNeeds: ["read", "write"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Edit lines of a file by anchor instead of by exact string: read it with read_file or read_file_range and anchors: true, which shows each line as `N#ID|text`, then pass `N#ID` anchors here.",
    "Ops: replace (pos..end), insert_before, insert_after, delete (pos..end). Every anchor is checked before anything changes: if a line changed since your read, nothing is written and the error quotes its current `N#ID|text`, so you can retry without reading the whole file again.",
    "Overlapping edits are refused. All edits land in one atomic write; the result gives fresh anchors for the changed lines (±2), and how line numbers below each edit shifted.",
  ].join(" "),
  schema,
  plan: (args, env) => planWrite(args.path, env, args.expected_sha256),
  async run(args, plan, env) {
    const { target } = plan;
    // A retry (expected_sha256) is judged under the lock first: its anchors no longer match if it landed.
    if (args.expected_sha256 === undefined) await precheckAnchors(env.mutation, target, args.edits);
    const { out, made, display } = await editInPlace(env, plan, (current) => {
      if (current === null)
        throw new ToolError("ENOENT", `\`${showName(target.rel)}\` does not exist. Create it with write_file.`);
      const edited = applyAnchoredEdits(decodeExact(current, target), args.edits, target.rel);
      return { ...edited, after: edited.text };
    });
    const { regions, shifts, totalLines } = made;
    const result: Record<string, unknown> = {
      ...mutationSummary(target, out),
      edits: args.edits.length,
      total_lines: totalLines,
      regions,
    };
    if (shifts.length) result.shifts = shifts;
    result.note = shifts.length
      ? "Anchors in `regions` are current. Your other anchors keep their IDs; their line numbers moved as `shifts` says (original line from_line on: add by)."
      : "Anchors in `regions` are current; line numbers elsewhere did not move.";
    return { result, display };
  },
  async preview(args, plan, env) {
    const before = await env.files.read(plan.target, env.signal);
    if (before === null)
      throw new ToolError("ENOENT", `\`${showName(plan.target.rel)}\` does not exist. Create it with write_file.`);
    return {
      before,
      after: Buffer.from(
        applyAnchoredEdits(decodeExact(before, plan.target), args.edits, plan.target.rel).text,
        "utf8",
      ),
    };
  },
});
