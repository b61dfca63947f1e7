// What a tool is. Each tool file exports one `defineTool({...})`: its schema and the description the
// model reads, its axis and annotations, a `plan` (the toolset gate: resolve paths, check limits,
// refuse early) and `run`. The host does everything else, once, for every tool.
import type { ProcessBackend } from "../process/backend.js";
import type { FileBackend } from "../fs/backend.js";
import type { z } from "zod";
import type { BackgroundProcesses } from "../shell/background.js";
import type { Settings } from "../config/settings.js";
import type { Undone } from "../sandbox/guard.js";
import type { CallContainment } from "../sandbox/call.js";
import type { SandboxState } from "../policy/envelope-eval.js";
import type { Axis, PlannedEffect } from "../policy/effect.js";
import type { Visibility } from "../policy/visibility.js";
import type { FolderIndex } from "../browse/find-index.js";
import type { PreviewFile } from "../edit/diff.js";
export type { PreviewFile } from "../edit/diff.js";
import type { ReadKind } from "../fs/ledger.js";
import type { PreImages } from "../fs/preimages.js";
import { baseOf, mutate, type MutationContext, type MutationOutcome } from "../edit/mutate.js";
import { displayWhileSyncing, type WriteDisplay } from "./write-display.js";
import type { ResolvedPath, ResolveOptions } from "../fs/paths.js";

export type { Axis };
export type Shape = "workspace" | "client" | "host";
/** ACP client capabilities a tool may need: `fs.readTextFile`, `fs.writeTextFile`, `terminal`. */
export type ClientCapability = "read" | "write" | "terminal";

export interface Annotations {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
}

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** What a tool sees of the world: nothing more, so a tool cannot step around the host. */
export interface ToolEnv {
  session: string;
  /** The canonical root local_fs works in (the workspace, or `_allowed_dir`). */
  root: string;
  /** Every toolset's settings, parsed once when the host was made (src/config/settings.ts); frozen. */
  settings: Settings;
  resolve(input: string, opts?: ResolveOptions): Promise<ResolvedPath>;
  /** This session's reads (src/fs/ledger.ts), bound: record one, or ask what was seen of exactly this content. */
  recordRead(abs: string, sha: string, kind: ReadKind): void;
  readSeen(abs: string, sha: string): ReadKind | undefined;
  /** The undo store (src/fs/preimages.ts), for the undo tool: what each write call of this root replaced. */
  preimages?: PreImages;
  /** The edit layer's capability (src/edit/mutate.ts): locks, the ledger, this session, the file backend. */
  mutation: MutationContext;
  /** Where the content tools' files live: this disk, or the ACP client's buffers (client shape). */
  files: FileBackend;
  /** Where local_shell's steps run: this machine, or the ACP client's terminals (client shape). */
  processes: ProcessBackend;
  /** local_shell's background processes and the process_* tools: this host's, reached by session. */
  background: BackgroundProcesses;
  /** The server's environment and PATH directories, captured once at startup, outside model input. */
  startupEnv: Readonly<NodeJS.ProcessEnv>;
  startupPath: readonly string[];
  /** latch's own files (config, state dir, policy logs): no tool, and no shell argument, may name them. */
  controlPlane: readonly string[];
  /** Shell-axis tools: do the call's processes run contained, with network (src/host/containment.ts)? */
  sandbox?: SandboxState;
  /** Shell-axis tools: the containment every process of the call runs under, set by the host before `run`. */
  containment?: CallContainment;
  /** What latch undid in this call (sandbox/guard.ts): the host's own check, and what tools add (a background process's). */
  undone?: Undone[];
  /** What a walk may show or search (src/policy/visibility.ts): every walking tool passes each entry through it. */
  visibility: Visibility;
  /** The host's folder index (src/browse/find-index.ts): what find_files' earlier walks found in folders unchanged since. */
  folderIndex?: FolderIndex;
  signal: AbortSignal;
  progress(p: Progress): void;
}

/**
 * What the toolset gate found. The fields of PlannedEffect (paths, walk roots, what would run, URLs) are
 * what the policy reads (src/policy/effect.ts); the rest is the tool's own, for its `run`.
 */
export interface Plan extends PlannedEffect {
  /** A one-file write's base: the sha256 of the bytes it was computed from (null: no file); an approval binds it. */
  base?: string | null;
  /** A multi-file write's bases, by absolute path (src/edit/changeset.ts). */
  bases?: Record<string, string | null>;
}

export interface ToolOutput {
  /** What the model gets (JSON). */
  result: unknown;
  /** What people get (diffs, stats); never sent to the model unasked. */
  display?: Record<string, unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry holds tools of every argument type
export interface ToolSpec<A = any, P extends Plan = Plan> {
  name: string;
  aliases: string[];
  toolset: string;
  /** What the policy checks the call as (src/policy/effect.ts): the envelope's axis rules and grant. */
  axis: Axis;
  shapes: Shape[];
  /** In the client shape, what the client must have announced for this tool to be offered. */
  clientNeeds?: ClientCapability[];
  description: string;
  schema: z.ZodType<A>;
  annotations: Annotations;
  /** The JSON Schema clients see for the arguments when it is not computed from `schema` (an attached tool's, as its server sent it). */
  inputJsonSchema?: Record<string, unknown>;
  /** A JSON Schema of `result`: declared, MCP clients get the result as structuredContent too (see transports/mcp/results.ts). */
  outputSchema?: Record<string, unknown>;
  /**
   * Every write of this tool goes through mutate() or a streamed edit, which wait for the call's
   * decision to be durable right before the rename (MutationContext.decisionSynced): the pipeline then
   * syncs the decision on the thread pool, overlapping the write's own syncs, instead of first.
   */
  awaitsDecisionSync?: true;
  /**
   * The call starts processes (local_shell, run_tool): what it makes beside a background process is
   * not held against that process (shell/background.ts). process_list and the other process tools
   * start none, so a model's polls do not wipe a background process's undos (review g34).
   */
  startsProcesses?: true;
  /** Whether the tool is offered at all under these policies (e.g. run_tool needs a catalog); default yes. */
  enabled?(settings: Settings, startupEnv?: Readonly<NodeJS.ProcessEnv>): boolean;
  /**
   * The most bytes of JSON a call's `arguments` may take (above what `schema` accepts, written plainly),
   * and the fix for a longer call: the MCP transports refuse one from its bytes, before decoding it
   * (transports/mcp/call-size.ts).
   */
  argumentLimit?: { bytes: number; fix: string };
  /** What the host's output backstop lets through, in bytes; default local_fs's `_max_output_bytes`. */
  resultBudget?(env: ToolEnv): number;
  plan(args: A, env: ToolEnv): Promise<P>;
  run(args: A, plan: P, env: ToolEnv): Promise<ToolOutput>;
  /**
   * Write tools: the exact bytes `run` would write, computed from the file's current bytes by the same
   * pure transform `run` uses, for the approval diff. Reads the disk directly and records no read.
   */
  preview?(args: A, plan: P, env: ToolEnv): Promise<Preview>;
}

interface Preview {
  /** The current content; null for a file that does not exist yet. */
  before: Buffer | null;
  after: Buffer;
  /** What read of the current content the write needs (default: any read; write_file: a full one). */
  needs?: ReadKind;
  /** A change of several files (apply_patch, move_file, delete_file): each one, in order; then `before`/`after` are unused. */
  files?: PreviewFile[];
}

/**
 * A tool as its file writes it: `schema` is a function that makes the zod schema, called at the first
 * use (a call's argument check, the build's JSON Schemas), not when the program loads: the tools' zod
 * schemas took ~5 ms of every start, and tools/list sends JSON Schemas computed at build time (an
 * attached tool's, as its server sent them).
 */
export type ToolDefinition<A, P extends Plan> = Omit<ToolSpec<A, P>, "schema"> & {
  schema: () => z.ZodType<A>;
};

export function defineTool<A, P extends Plan>(spec: ToolDefinition<A, P>): ToolSpec<A, P> {
  const { schema: make, ...rest } = spec;
  let made: z.ZodType<A> | undefined;
  return Object.defineProperty(rest, "schema", {
    get: () => (made ??= make()),
    enumerable: true,
  }) as ToolSpec<A, P>;
}

/** The usual plan of a tool with one `path` argument. */
export async function planPath(
  input: string,
  env: ToolEnv,
  forWrite = false,
): Promise<{ paths: ResolvedPath[]; target: ResolvedPath }> {
  const target = await env.resolve(input, { forWrite });
  return { paths: [target], target };
}

/**
 * The plan of a write tool with one `path` argument: its target, and its base (what the session last
 * read or wrote of it), taken now, at the start of the call, before any approval or lock wait.
 */
export async function planWrite(
  input: string,
  env: ToolEnv,
  expected?: string,
): Promise<{ paths: ResolvedPath[]; target: ResolvedPath; base: string | null; expected?: string }> {
  const p = await planPath(input, env, true);
  return { ...p, base: baseOf(env.mutation, p.target), ...(expected !== undefined ? { expected } : {}) };
}

/**
 * An edit of one file in place (edit_file, sed, hash_edit): `change` computes the new content from the
 * current bytes under the lock, after the read-before-write and base checks, and returns it with
 * whatever the tool reports of it (replacement counts, regions); the write lands only on those bytes.
 */
export async function editInPlace<T extends { after: string | Buffer }>(
  env: ToolEnv,
  plan: { target: ResolvedPath; base?: string | null; expected?: string },
  change: (current: Buffer | null) => T,
): Promise<{ out: MutationOutcome; made: T; display: WriteDisplay }> {
  let made: T | undefined;
  // The diff it shows is built while the write's syncs run (Mutation.meanwhile).
  const shown = displayWhileSyncing(plan.target);
  const out = await mutate(env.mutation, {
    target: plan.target,
    needs: "range",
    expectSha: plan.base,
    expected: plan.expected,
    apply(current) {
      made = change(current);
      return made.after;
    },
    meanwhile: shown.during,
  });
  // mutate() returns only after apply() ran: an outcome without it is a latch bug, not a user error.
  if (made === undefined) throw new Error("latch bug: the edit's change was never computed");
  return { out, made, display: shown.after(out) };
}

/** A shell-axis tool's containment for this call, which the host sets before `run` (src/host/containment.ts). */
export function callContainmentOf(env: ToolEnv): CallContainment {
  if (!env.containment) throw new Error("latch bug: a shell-axis tool ran without the call's containment");
  return env.containment;
}
