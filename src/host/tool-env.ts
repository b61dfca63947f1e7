// What a tool sees of its call (ToolEnv): the session, the one path resolver with the write checks,
// the ledger, the backends, the sandbox state and the visibility rule, made once per call.
import { setMaxListeners } from "node:events";
import { lstatSync } from "node:fs";
import { trashIn } from "../fs/same-file.js";
import { Refusal } from "../errors.js";
import { protectedRefusal, protectedWriteTarget } from "../fs/protected.js";
import { resolvePath, type PathPolicy, type ResolvedPath, type ResolveOptions } from "../fs/paths.js";
import { osPath } from "../fs/names.js";
import { visibilityRule } from "../policy/visibility.js";
import type { ToolEnv, ToolSpec } from "../tools/define.js";
import type { HostContext } from "./context.js";
import { sandboxState } from "./containment.js";
import type { CallOptions } from "./types.js";

/** The signal of a call nobody can cancel: one for all of them (a new AbortController per call shows in profiles). */
const NEVER_ABORTED: AbortSignal = new AbortController().signal;
setMaxListeners(0, NEVER_ABORTED); // concurrent calls each add (and later remove) a listener

/** `onResolved` hears of every path resolved (undefined) or refused (the refusal), for planCall. */
export function makeEnv(
  ctx: HostContext,
  opts: CallOptions,
  spec: ToolSpec,
  onResolved?: (err?: unknown) => void,
): ToolEnv {
  const tool = spec.name;
  const session = opts.session ?? "default";
  const pathPolicy: PathPolicy = {
    root: ctx.root,
    controlPlane: ctx.controlPlane,
    deniedSubstrings: ctx.settings.local_fs.deniedPathSubstrings,
    otherRoots: ctx.otherRoots,
  };
  return {
    session,
    root: ctx.root,
    settings: ctx.settings,
    resolve: onResolved
      ? (input, o) =>
          resolveFor(ctx, pathPolicy, input, o).then(
            (r) => (onResolved(), r),
            (err: unknown) => {
              onResolved(err);
              throw err;
            },
          )
      : (input, o) => resolveFor(ctx, pathPolicy, input, o),
    // Only read tools record reads: with a caller that answers first, after the answer.
    recordRead: opts.answerFirst
      ? (abs, sha, kind) => ctx.ledger.recordSoon(session, abs, sha, kind)
      : (abs, sha, kind) => ctx.ledger.record(session, abs, sha, kind),
    ...(ctx.preimages ? { preimages: ctx.preimages } : {}),
    readSeen: (abs, sha) => ctx.ledger.seen(session, abs, sha),
    mutation: {
      root: ctx.root,
      locksDir: ctx.state.locks,
      trash: trashIn(ctx.state.dir),
      ledger: ctx.ledger,
      session,
      files: ctx.files,
      signal: opts.signal,
    },
    files: ctx.files,
    processes: ctx.processes,
    background: ctx.background,
    startupEnv: ctx.startupEnv,
    startupPath: ctx.startupPath,
    controlPlane: ctx.controlPlane,
    sandbox: sandboxState(spec, ctx.settings, ctx.probe),
    visibility: visibilityRule({
      root: ctx.root,
      controlPlane: ctx.controlPlane,
      deniedSubstrings: ctx.settings.local_fs.deniedPathSubstrings,
      envelope: ctx.policy.envelope,
      tool,
    }),
    folderIndex: ctx.folderIndex,
    signal: opts.signal ?? NEVER_ABORTED,
    progress: (p) => opts.onProgress?.(p),
  };
}

/** The one resolver; a path resolved for writing must also not be a repository's own file (src/fs/protected.ts). */
async function resolveFor(
  ctx: HostContext,
  policy: PathPolicy,
  input: string,
  o: ResolveOptions | undefined,
): Promise<ResolvedPath> {
  const r = await resolvePath(policy, input, o);
  if (!o?.forWrite) return r;
  const why = protectedWriteTarget(ctx.root, r.abs, r.rel, ctx.settings.local_fs.protectedPaths);
  if (why) throw protectedRefusal(why);
  // A file with another hard link is also another path, maybe outside the root or under a rule:
  // writing in place would change it there too. Refused rather than guessed at.
  const links = r.exists ? (lstatSync(osPath(r.abs), { throwIfNoEntry: false })?.nlink ?? 1) : 1;
  if (links > 1 && !lstatSync(osPath(r.abs)).isDirectory())
    throw new Refusal(
      `\`${r.rel}\` has ${links} hard links: the same file is reachable by another path, which a write would change too (or silently split from this one).`,
      "Copy it to a file of its own (cp, then mv over it in the shell) if you mean to change only this path; do not retry as is.",
    );
  return r;
}
