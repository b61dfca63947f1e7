// The folders a host serves (several MCP roots): each is a workspace and the root its tools work in
// (the workspace, or its `_allowed_dir`). Every served root gets a call context of its own, built
// from the host's services, the config snapshot in force and the root; the first serves relative
// paths, and a path in another root plans its call there (pipeline.ts planCall).
import { stat } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../config/load.js";
import type { Settings } from "../config/settings.js";
import { canonicalize } from "../fs/paths.js";
import type { HostContext } from "./context.js";

export interface ServedRoot {
  /** The workspace folder (an MCP root), canonical. */
  workspace: string;
  /** Where the tools work in it: the workspace, or its `_allowed_dir`. */
  root: string;
}

/** A folder as a served root under these settings; a missing folder or `_allowed_dir` is a ConfigError. */
export async function placeRoot(folder: string, settings: Settings): Promise<ServedRoot> {
  const workspace = await existingFolder(folder, "root");
  const allowed = settings.local_fs.allowedDir;
  const root = allowed
    ? await existingFolder(path.resolve(workspace, allowed), "tools_policies.local_fs._allowed_dir")
    : workspace;
  return { workspace, root };
}

async function existingFolder(dir: string, what: string): Promise<string> {
  const abs = path.resolve(dir);
  const st = await stat(abs).catch(() => undefined); // a missing or unreadable folder is reported below, with the fix
  if (!st?.isDirectory()) throw new ConfigError(`Expected \`${what}\` to be an existing folder, got \`${dir}\`.`);
  return canonicalize(abs);
}

/** The served roots and their call contexts, rebuilt whole whenever the roots or what they share change. */
export class ServedRoots {
  private places: readonly ServedRoot[];
  private contexts: readonly HostContext[] = [];
  /** Where relative paths resolve (`host.root`): the first root, kept while no root is served. */
  primary: ServedRoot;

  constructor(
    first: ServedRoot,
    private readonly contextFor: (place: ServedRoot) => Omit<HostContext, "otherRoots" | "rootContext">,
  ) {
    this.places = [first];
    this.primary = first;
    this.rebuild();
  }

  /** Serve exactly these (duplicates of a root dropped); an empty list serves nothing. */
  serve(places: readonly ServedRoot[]): void {
    this.places = places.filter((p, i) => places.findIndex((q) => q.root === p.root) === i);
    if (this.places.length) this.primary = this.places[0];
    this.rebuild();
  }

  /** New contexts from the same places (after a reload, a new probe or a new scanner). */
  rebuild(): void {
    const next: HostContext[] = this.places.map((p) => ({ ...this.contextFor(p) }));
    for (const c of next) {
      c.otherRoots = next.filter((o) => o !== c).map((o) => o.root);
      c.rootContext = (r) => next.find((o) => o.root === r);
    }
    this.contexts = next;
  }

  /** The context calls run in (the first root's), or undefined when no root is served. */
  current(): HostContext | undefined {
    return this.contexts[0];
  }

  list(): ServedRoot[] {
    return this.contexts.map((c) => ({ workspace: c.workspace, root: c.root }));
  }

  workspaces(): string[] {
    return this.places.map((p) => p.workspace);
  }
}
