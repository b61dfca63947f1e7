// The envelope model: what a session's approval rules are, once parsed and merged along `extends`.
// Parsing and merging live in envelope-parse.ts, evaluation in envelope-eval.ts.
import type { Action } from "./decision.js";
import picomatch from "picomatch";
import type { Mode } from "../sandbox/types.js";

export const ACTIONS: readonly Action[] = ["allow", "approve", "deny"];

/** A rule of always_deny / always_allow: it matches when the tool matches and every `when_*` given matches. */
export interface EnvelopeRule {
  tool: string;
  when_path?: string;
  when_command?: string;
  /** Where the rule came from (an envelope's name, or "quarantine"), for the reason. */
  from: string;
}

export interface PathAxis {
  grant?: Action;
  deny_paths: string[];
  approve_paths: string[];
}

export interface ShellAxis {
  grant?: Action;
  blacklist: string[];
  /** Allowed without asking; contained, these run with a read-only workspace (the read-only tier). */
  prefix_allowlist: string[];
  ask_always: string[];
  /** Allowed without asking only when contained without network and naming no path outside the root. */
  contained_allowlist: string[];
  /** The mode contained_allowlist commands run in (default read-only). */
  contained_mode?: Mode;
  /** When set, replaces prefix_allowlist for uncontained calls, which must name no path outside the root. */
  uncontained_allowlist?: string[];
  /** An approved write of .git/config may set a key whose value git runs as a program (core.fsmonitor, alias.*…). */
  allow_git_exec_config?: boolean;
}

/** The `web` axis (url_fetch, web_search): a grant, and domain lists for the hosts a call names. */
export interface WebAxis {
  grant?: Action;
  /** A domain here allows a fetch of it or of any subdomain (step 6, before the grant). */
  allow_domains: string[];
  /** A domain here denies a fetch of it or of any subdomain (step 2, like deny_paths). */
  deny_domains: string[];
}

/** What the disclosure gate does with a result holding secrets (issue 29), least strict first. */
export type DisclosureMode = "allow" | "report" | "redact" | "withhold";
export const DISCLOSURE_MODES: readonly DisclosureMode[] = ["allow", "report", "redact", "withhold"];

/** `[envelopes.NAME.disclosure]`: the mode for every tool, and per-tool overrides (by name or glob). */
export interface DisclosureRules {
  secrets: DisclosureMode;
  tools: Record<string, DisclosureMode>;
}

export interface Envelope {
  name: string;
  /** The envelope and its ancestors, child first. */
  chain: string[];
  description: string;
  default_action: Action;
  files: { read: PathAxis; write: PathAxis };
  shell: ShellAxis;
  web: WebAxis;
  disclosure: DisclosureRules;
  tools: Record<string, Action>;
  always_deny: EnvelopeRule[];
  always_allow: EnvelopeRule[];
  /** How long an approval may wait, in seconds; then `on_timeout` (always deny). */
  timeout: number;
  on_timeout: "deny";
}

/** Whether `host` is `domain` or one of its subdomains (both lowercase; no trailing dot). */
export function domainMatches(domain: string, host: string): boolean {
  return host === domain || host.endsWith("." + domain);
}

/**
 * Whether a rule's `tool` pattern (`*`, a name, or a glob such as `read_*`) names the tool. Every call
 * tries every pattern of its envelope: a plain name is compared, and a glob is compiled once
 * (picomatch.isMatch compiles anew each time, ~15 µs a pattern, more than the rest of the envelope).
 */
export function toolMatches(pattern: string, tool: string): boolean {
  if (pattern === "*" || pattern === tool) return true;
  if (!GLOB_META.test(pattern)) return false;
  let m = toolGlobs.get(pattern);
  if (!m) toolGlobs.set(pattern, (m = picomatch(pattern)));
  return m(tool);
}

/** What makes a tool pattern a glob to picomatch (else it is a plain name). */
const GLOB_META = /[*?[\]{}()!+@\\]/;
/** Compiled tool globs, by pattern: the configs' patterns, a handful. */
const toolGlobs = new Map<string, (tool: string) => boolean>();

export const DEFAULT_APPROVAL_TIMEOUT_S = 300;
export const DEFAULT_ENVELOPE = "auto_edit";
