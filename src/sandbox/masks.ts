// What a contained process may not see or change, beyond the read-only root filesystem. The lists
// follow sandbox-runtime's mandatory denies (linux-sandbox-utils.ts: shell rc files, .gitconfig,
// .git/hooks, editor and agent config) and codex-rs linux-sandbox (`.git` stays read-only inside a
// writable root), narrowed so that `git add` and `git commit` still work in workspace-write mode.
import { statSync } from "node:fs";
import path from "node:path";

/** Under the home folder: credential stores, made unreadable (an empty tmpfs or /dev/null over them). */
export const CREDENTIAL_STORES: readonly string[] = [
  ".ssh",
  ".aws",
  ".azure",
  ".gnupg",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".docker",
  ".kube",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".config/latch",
  ".local/state/latch",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".terraform.d/credentials.tfrc.json",
  ".local/share/keyrings",
  ".password-store",
];

/**
 * Inside a writable workspace, relative to its root: kept read-only, because git or a shell would
 * later run what they hold outside the sandbox (hooks, `core.fsmonitor`, `gitdir:` pointers, rc files).
 */
export const WORKSPACE_READ_ONLY: readonly string[] = [
  ".git/config",
  ".git/hooks",
  ".git/info",
  ".gitmodules",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".ripgreprc",
  ".mcp.json",
  ".vscode",
  ".idea",
  ".claude/commands",
  ".claude/agents",
];

/** Sockets of daemons that act for the user (docker is root on the host): hidden under /run. */
export const HIDDEN_RUNTIME: readonly string[] = ["/run", "/var/run"];

/** The environment a contained process starts with: only these names pass (plus LC_*), nothing else. */
export const ENV_ALLOW: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "COLUMNS",
  "LINES",
  "NO_COLOR",
  "FORCE_COLOR",
  "CI",
  "NODE_ENV",
];

export function sandboxEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (ENV_ALLOW.includes(k) || k.startsWith("LC_"))) out[k] = v;
  }
  out.TMPDIR = "/tmp"; // the private one
  // The workspace is a mount point inside: git would stop looking for a repository above it.
  out.GIT_DISCOVERY_ACROSS_FILESYSTEM = "1";
  return out;
}

export type Kind = "dir" | "file" | "other";

/** What is at `p` (following symlinks, as bwrap does for a mount's destination), or undefined when nothing is. */
export function kindOf(p: string): Kind | undefined {
  try {
    const st = statSync(p);
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  } catch {
    return undefined; // absent or unreadable: nothing to mount over
  }
}

/** The existing paths of WORKSPACE_READ_ONLY under `root`, and a `.git` that is a file (a `gitdir:` pointer). */
export function workspaceMasks(root: string): string[] {
  const out: string[] = [];
  if (kindOf(path.join(root, ".git")) === "file") out.push(path.join(root, ".git"));
  for (const rel of WORKSPACE_READ_ONLY) {
    const p = path.join(root, rel);
    if (kindOf(p) !== undefined) out.push(p);
  }
  return out;
}

export function credentialStores(home: string | undefined): string[] {
  if (!home || !path.isAbsolute(home)) return [];
  return CREDENTIAL_STORES.map((rel) => path.join(home, rel));
}
