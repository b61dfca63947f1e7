import { z } from "zod";
import { Refusal } from "../errors.js";
import {
  basesOf,
  commitChanges,
  readCurrents,
  type Bases,
  type Currents,
  type Expected,
  type FileChange,
} from "../edit/changeset.js";
import { patchChanges, type FileReport, type ResolvedOp } from "../edit/patch/changes.js";
import { parsePatch } from "../edit/patch/parse.js";
import type { ResolvedPath } from "../fs/paths.js";
import { gitDirMadeBy, protectedRefusal } from "../fs/protected.js";
import { defineTool, type Plan, type PreviewFile } from "./define.js";
import { dryRunField } from "./dry-run.js";
import { expectedMapField } from "./expected.js";
import { filesDisplay } from "./write-display.js";
import { showName } from "../fs/names.js";

const schema = () =>
  z.strictObject({
    patch: z
      .string()
      .min(1)
      .describe(
        "The whole patch: Codex's format (`*** Begin Patch` … `*** End Patch`) or a unified diff as `git diff` prints it.",
      ),
    expected_sha256: expectedMapField(),
    dry_run: dryRunField(),
  });

interface PatchPlan extends Plan {
  paths: ResolvedPath[];
  ops: ResolvedOp[];
  format: string;
  /** What the session last read or wrote of each file, taken when the call started. */
  bases: Bases;
  /** expected_sha256, by absolute path. */
  expected: Expected;
}

export default defineTool({
  name: "apply_patch",
  aliases: ["patch"],
  toolset: "local_fs",
  axis: "files.write",
  shapes: ["workspace"],
  annotations: { readOnly: false, destructive: true, idempotent: false },
  description: [
    "Apply a patch to one or more files, all or nothing: every chunk is located and every file checked before anything is written, and on any failure no file changes.",
    "Takes Codex's format (`*** Begin Patch`, `*** Add File: P` with + lines, `*** Delete File: P`, `*** Update File: P` optionally followed by `*** Move to: Q`, then `@@` chunks of ' ', '-', '+' lines, `*** End of File`, `*** End Patch`) or a unified diff (`--- a/P`, `+++ b/P`, `@@ -l,n +l,n @@`).",
    "Context lines must match the file; exact lines are tried first, and a chunk placed by looser matching (whitespace, typographic punctuation) is reported in `loose`.",
    "Updated, deleted and overwritten files need a read of their current content in this session first. dry_run: true returns the diff and writes nothing.",
  ].join(" "),
  schema,
  async plan(args, env): Promise<PatchPlan> {
    const parsed = parsePatch(args.patch);
    if (parsed.ops.length === 0)
      throw new Refusal("The patch changes no file.", "Add at least one `*** Add/Update/Delete File:` section.");
    const ops: ResolvedOp[] = [];
    const paths: ResolvedPath[] = [];
    const seen = new Map<string, string>();
    const claim = (p: ResolvedPath) => {
      const prev = seen.get(p.abs);
      if (prev !== undefined)
        throw new Refusal(
          `The patch changes \`${showName(p.rel)}\` twice (as \`${prev}\` and \`${p.input}\`).`,
          "Put all the changes to one file in one section.",
        );
      seen.set(p.abs, p.input);
      paths.push(p);
    };
    for (const op of parsed.ops) {
      const target = await env.resolve(op.path, { forWrite: true });
      claim(target);
      let dest: ResolvedPath | undefined;
      if (op.kind === "update" && op.moveTo !== undefined) {
        dest = await env.resolve(op.moveTo, { forWrite: true });
        if (dest.abs !== target.abs) claim(dest);
      }
      ops.push({ op, target, ...(dest ? { dest } : {}) });
    }
    // Each file alone may be fine and the whole not: HEAD, objects/ and refs/ added in one patch.
    const made = gitDirMadeBy(
      env.root,
      paths.map((p) => p.rel),
    );
    if (made !== undefined) throw protectedRefusal(made);
    const expected: Expected = {};
    for (const [input, sha] of Object.entries(args.expected_sha256 ?? {})) {
      const p = await env.resolve(input, { forWrite: true });
      if (!seen.has(p.abs))
        throw new Refusal(
          `expected_sha256 names \`${showName(p.rel)}\`, which the patch does not change.`,
          "Give expected_sha256 only for the files the patch updates or deletes, by their path in the patch.",
        );
      expected[p.abs] = sha;
    }
    return { paths, ops, format: parsed.format, bases: basesOf(env.mutation, paths), expected };
  },
  async run(args, plan, env) {
    let report: FileReport[] = [];
    let shown: PreviewFile[] = [];
    const out = await commitChanges(
      env.mutation,
      plan.paths,
      plan.bases,
      (currents) => {
        const c = patchChanges(plan.ops, currents);
        report = c.report;
        shown = previewFiles(c.changes, currents);
        return c.changes;
      },
      plan.expected,
    );
    const loose = report.some((r) => r.loose);
    return {
      result: {
        format: plan.format,
        files: report,
        changed: out.outcomes.filter((o) => o.written).length,
        ...(out.warning ? { warning: out.warning } : {}),
        ...(loose
          ? { note: "Some chunks matched only loosely (see `loose`); check those places, and copy context exactly." }
          : {}),
      },
      display: filesDisplay(shown),
    };
  },
  async preview(args, plan) {
    const currents = await readCurrents(plan.paths);
    const { changes } = patchChanges(plan.ops, currents);
    return { before: null, after: Buffer.alloc(0), files: previewFiles(changes, currents) };
  },
});

/**
 * One diff section per file; a move to a new path shows as one rename diff (source content → new
 * content), a move over an existing file as that file's overwrite plus the source's removal.
 */
function previewFiles(changes: FileChange[], currents: Currents): PreviewFile[] {
  const renamed = new Set<string>();
  const files: PreviewFile[] = [];
  for (const c of changes) {
    if (renamed.has(c.target.abs)) continue;
    const before = currents.get(c.target.abs) ?? null;
    if (c.markerFrom && before === null) {
      renamed.add(c.markerFrom.abs);
      const from = currents.get(c.markerFrom.abs) ?? null;
      files.push({
        rel: c.target.rel,
        fromRel: c.markerFrom.rel,
        before: from,
        after: c.after,
        source: c.markerFrom,
        needs: "range",
      });
      continue;
    }
    files.push({ rel: c.target.rel, before, after: c.after, source: c.target, needs: c.needs });
  }
  return files;
}
