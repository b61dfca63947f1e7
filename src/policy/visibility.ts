// The one visibility rule under every walk (grep with either engine, find_files, list_dir,
// count_stats, ast_search, ast_rewrite_preview, and any walk added later): an entry a walk meets is
// hidden when it is latch's control plane, matches `_denied_path_substrings`, is under the credential
// quarantine, or is closed to this tool by the envelope (always_deny path rules, and the read axis's
// deny_paths and approve_paths: a walk cannot ask a person entry by entry). A hidden entry is neither
// named nor searched; a hidden folder is not entered. Walks count what they hid, never name it.
import picomatch from "picomatch";
import { deniedSubstring, inControlPlane, isInside } from "../fs/paths.js";
import { toolMatches, type Envelope } from "./envelope.js";
import { envelopeGlob } from "../fs/glob.js";
import { quarantineGlob, QUARANTINE_RG_EXCLUDES } from "../fs/quarantine.js";
import { GLOB_OPTIONS } from "../fs/glob.js";

export interface Visibility {
  /** Why an entry a walk found (root-relative slash path) must stay hidden; undefined when it may be shown. */
  hides(rel: string, isDir: boolean): string | undefined;
  /** Everything the rule is made of (root, control plane, denied substrings, the envelope's globs): equal keys, equal verdicts. */
  readonly key: string;
  /**
   * ripgrep `-g` globs (each starting with `!`), relative to the folder `startRel` rg walks, that
   * leave out at least every entry `hides` would. Undefined when some rule has no ripgrep form: the
   * caller then walks in-process, where `hides` runs on each entry.
   */
  rgExcludes(startRel: string): string[] | undefined;
}

export interface VisibilitySetup {
  root: string;
  controlPlane: readonly string[];
  deniedSubstrings: readonly string[];
  /** The session's envelope; its rules that name `tool` apply. */
  envelope: Envelope;
  tool: string;
}

const GLOB_OPTS = GLOB_OPTIONS;

/** The envelope's globs that close a path to this tool without anyone being asked. */
function envelopeHidingGlobs(env: Envelope, tool: string): { glob: string; why: string }[] {
  const out: { glob: string; why: string }[] = [];
  for (const r of env.always_deny) {
    if (r.from === "quarantine" || !r.when_path || r.when_command || !toolMatches(r.tool, tool)) continue;
    out.push({ glob: r.when_path, why: `envelope ${env.name}: always_deny` });
  }
  for (const g of env.files.read.deny_paths) out.push({ glob: g, why: `envelope ${env.name}: files.read.deny_paths` });
  for (const g of env.files.read.approve_paths)
    out.push({ glob: g, why: `envelope ${env.name}: files.read.approve_paths` });
  return out;
}

/**
 * The globs a contained process of `tool` must not read through (sandbox/secrets.ts masks what they
 * match): the walks' envelope rules that never open, always_deny and files.read.deny_paths. Not
 * approve_paths: a person may approve a line that names one, and the mask would make it read nothing.
 */
export function sandboxDeniedGlobs(env: Envelope, tool: string): string[] {
  return envelopeHidingGlobs(env, tool)
    .filter((g) => !g.why.endsWith("files.read.approve_paths"))
    .map((g) => g.glob);
}

export function visibilityRule(s: VisibilitySetup): Visibility {
  const globs = envelopeHidingGlobs(s.envelope, s.tool).map((g) => ({ ...g, test: envelopeGlob(g.glob) })); // as the envelope reads it
  const base = s.root.endsWith("/") ? s.root : s.root + "/";
  let key: string | undefined;
  return {
    // Made when asked (find_files' index): a rule is made for every call.
    get key() {
      return (key ??= JSON.stringify([s.root, s.controlPlane, s.deniedSubstrings, globs.map((g) => [g.glob, g.why])]));
    },
    hides(rel, isDir) {
      const abs = rel === "." ? s.root : base + rel;
      if (inControlPlane(abs, s.controlPlane)) return "latch's control plane";
      if (deniedSubstring(rel, s.deniedSubstrings, isDir) !== undefined) return "_denied_path_substrings";
      if (quarantineGlob(abs) !== undefined) return "the credential quarantine";
      for (const g of globs) if (g.test(abs) || g.test(rel)) return g.why;
      return undefined;
    },
    rgExcludes(startRel) {
      const out = [...QUARANTINE_RG_EXCLUDES];
      for (const c of s.controlPlane) {
        if (!isInside(s.root, c) || c === s.root) continue;
        const g = underStart(toSlashRel(s.root, c), startRel);
        if (g === null) return undefined;
        if (g !== undefined) out.push("!" + g);
      }
      for (const d of s.deniedSubstrings) {
        const g = substringGlob(d, startRel);
        if (g === null) return undefined;
        if (g !== undefined) out.push("!" + g);
      }
      for (const { glob } of globs) {
        const gs = envelopeGlobForRg(glob, s.root, startRel);
        if (gs === null) return undefined;
        for (const g of gs) out.push("!" + g);
      }
      return out;
    },
  };
}

function toSlashRel(root: string, abs: string): string {
  return abs.slice(root.length + (root.endsWith("/") ? 0 : 1));
}

const META = /[*?[\]{}()!\\]/;

/**
 * A literal root-relative path as an rg glob anchored at the folder rg walks: undefined when it is not
 * below that folder (nothing to leave out), null when it cannot be written as a glob.
 */
function underStart(rel: string, startRel: string): string | null | undefined {
  if (META.test(rel)) return null;
  if (startRel === ".") return "/" + rel;
  if (rel.startsWith(startRel + "/")) return "/" + rel.slice(startRel.length + 1);
  return undefined;
}

/**
 * A denied substring as an rg glob: every entry whose root-relative path (a folder's with a trailing
 * `/`) contains it. A substring with a leading or inner `/` can span the walked folder's own path, so
 * below the root it has no glob (null); one with only a trailing `/` names folders (`.git/`).
 */
export function substringGlob(d: string, startRel: string): string | null | undefined {
  if (d === "") return undefined;
  if (META.test(d)) return null;
  if (!d.includes("/")) return `**/*${d}*`;
  const lead = d.startsWith("/");
  const trail = d.endsWith("/");
  const parts = d.slice(lead ? 1 : 0, trail ? -1 : undefined).split("/");
  if (parts.some((p) => p === "")) return null;
  if ((lead || parts.length > 1) && startRel !== ".") return null;
  const segs = parts.map((p, i) => (i === 0 && !lead ? "*" : "") + p + (i === parts.length - 1 && !trail ? "*" : ""));
  return (lead ? "*/**/" : "**/") + segs.join("/") + (trail ? "/" : "");
}

/**
 * An envelope glob (matched against absolute paths and root-relative ones) as rg globs relative to the
 * walked folder; [] when it can match nothing below it, null when it has no rg form.
 */
export function envelopeGlobForRg(glob: string, root: string, startRel: string): string[] | null {
  if (glob.startsWith("!") || /[()]/.test(glob) || glob.includes("\\")) return null;
  let g = glob;
  if (g.startsWith("/")) {
    if (g.startsWith("/**/")) g = g.slice(1);
    else if (g.startsWith(root + "/")) g = g.slice(root.length + 1);
    else {
      // Absolute elsewhere: only a glob whose literal head is an ancestor of the root can reach inside it.
      const segs = g.split("/");
      const meta = segs.findIndex((seg) => META.test(seg));
      if (meta === -1) return [];
      return isInside(segs.slice(0, meta).join("/") || "/", root) ? null : [];
    }
  }
  const out: string[] = [];
  const add = (x: string) => {
    out.push(x);
    // `x/**` and `x/*` cover the folder x too (the envelope tests a folder as `x/…`): leave it out whole.
    const m = /^(.*)\/\*\*?$/.exec(x);
    if (m && m[1] !== "" && m[1] !== "**") out.push(m[1]);
  };
  if (g.startsWith("**/") || g === "**") {
    add(g);
    return out;
  }
  // Root-anchored: walk the glob's segments down the walked folder's own path.
  const segs = g.split("/");
  const start = startRel === "." ? [] : startRel.split("/");
  let i = 0;
  for (; i < start.length; i++) {
    if (i >= segs.length) return []; // it names an ancestor of the walked folder, which the envelope already judged
    const seg = segs[i];
    if (seg === "**") {
      add(["**", ...segs.slice(i + 1)].join("/"));
      return out;
    }
    if (META.test(seg)) {
      if (!picomatch.isMatch(start[i], seg, GLOB_OPTS)) return [];
      continue;
    }
    if (seg !== start[i]) return [];
  }
  if (i >= segs.length) return [];
  add("/" + segs.slice(i).join("/"));
  return out;
}
