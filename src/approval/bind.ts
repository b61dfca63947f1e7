// Before a person is asked about a write: the preview (the exact bytes the write would make, from the
// bytes on disk now), and every check that needs no person, so nobody is asked about a call that
// would fail anyway (not read first, no match, ambiguous match, changed since read …). After a yes:
// the write is bound to the bytes the person saw. Each file's base (the sha256 the write lands on,
// checked under the write lock by src/edit/mutate.ts) must be the sha256 of the content the diff
// was made from; a file that changes between the preview and the write is then refused as stale, and
// nothing is written.
import { isUtf8 } from "node:buffer";
import { Refusal, ToolError } from "../errors.js";
import type { Plan, PreviewFile, ToolEnv, ToolSpec } from "../tools/define.js";
import { baseOf, checkBase, checkReadBeforeWrite } from "../edit/mutate.js";
import { sha256 } from "../fs/text.js";
import { buildDiff, buildFilesDiff } from "../edit/diff.js";

export interface Prepared {
  diff?: string;
  diffNote?: string;
  /** Root-relative path → sha256 of the content the diff was made from (null: the file did not exist). */
  contentSha256: Record<string, string | null>;
  /** The same by canonical path, for the binding. */
  byAbs: Map<string, string | null>;
  /** Both sides of a one-file text change, for approvers that draw the diff themselves (ACP). */
  change?: { path: string; before: string | null; after: string };
}

/** The preview and the checks that need no person; a Refusal or ToolError thrown here ends the call unasked. */
export async function prepareApproval(tool: ToolSpec, args: unknown, plan: Plan, env: ToolEnv): Promise<Prepared> {
  const out: Prepared = { contentSha256: {}, byAbs: new Map() };
  if (!tool.preview) return out;
  const target = plan.paths?.[0];
  let files: PreviewFile[];
  let built;
  try {
    const p = await tool.preview(args, plan, env);
    files =
      p.files ??
      (target
        ? [{ rel: target.rel, before: p.before, after: p.after, source: target, needs: p.needs ?? "range" }]
        : []);
    built = p.files ? buildFilesDiff(p.files) : buildDiff(target?.rel ?? "file", p.before, p.after);
  } catch (err) {
    if (err instanceof Refusal || err instanceof ToolError) throw err; // no match, ambiguous, not a file …
    // The person is told the content could not be established; nothing can be bound, so nothing is.
    return {
      ...out,
      diffNote: `no diff: the current content could not be established safely (${(err as Error).message})`,
    };
  }
  for (const f of files) {
    const sha = f.before === null ? null : sha256(f.before);
    // The write's own preconditions, in the order the write checks them under its lock.
    const base = planBase(plan, f.source.abs);
    checkBase(env.mutation, f.source, sha, base === undefined ? baseOf(env.mutation, f.source) : base);
    if (f.before !== null && f.needs !== undefined) checkReadBeforeWrite(env.mutation, f.source, sha!, f.needs);
    out.contentSha256[f.rel] = sha;
    out.byAbs.set(f.source.abs, sha);
  }
  if (built.diff !== undefined) out.diff = built.diff;
  if (built.note) out.diffNote = built.note;
  const one = files.length === 1 ? files[0] : undefined;
  const after = one?.after;
  if (one && after && built.diff !== undefined && (one.before === null || isUtf8(one.before)) && isUtf8(after)) {
    out.change = { path: one.source.abs, before: one.before?.toString("utf8") ?? null, after: after.toString("utf8") };
  }
  return out;
}

/** The base a plan carries for a file: `base` (one file, planWrite) or `bases[abs]` (several). */
function planBase(plan: Plan, abs: string): string | null | undefined {
  if (plan.bases && abs in plan.bases) return plan.bases[abs];
  if (plan.base !== undefined && plan.paths?.[0]?.abs === abs) return plan.base;
  return undefined;
}

/**
 * After a yes: every file's base must be the content the person saw; a plan without one gets it.
 * Throws a stale Refusal when they differ (the file was read again, or changed, in between).
 */
export function bindApproved(plan: Plan, prepared: Prepared): void {
  for (const [abs, sha] of prepared.byAbs) {
    const base = planBase(plan, abs);
    if (base === undefined) {
      if (plan.paths?.[0]?.abs === abs) plan.base = sha;
      else plan.bases = { ...(plan.bases ?? {}), [abs]: sha };
      continue;
    }
    if (base !== sha) {
      throw new Refusal(
        "The file changed between the approval preview and the write (stale); nothing was written.",
        "Read it again, then retry: the person will be asked again with a fresh diff.",
      );
    }
  }
}
