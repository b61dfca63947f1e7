// The built-in envelopes. Each is documented in docs/policy.md with its rules; every one of them (and
// every user envelope) also carries the credential quarantine, added when an envelope is resolved.
import type { EnvelopeDef } from "./envelope-parse.js";

/**
 * The read-only tier: allowed without asking under `default` and `auto_edit` when contained (the
 * workspace is then read-only to them, so `git log --output=…` cannot write).
 */
const READ_ONLY_COMMANDS: readonly string[] = [
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "pwd",
  "git status",
  "git diff",
  "git log",
  "git show",
];

/**
 * Never run from the built-in envelopes: privilege escalation and raw-disk tools (the first seed's
 * default chains). `rm` or `find -delete` of /, the home folder or the workspace root is refused by the
 * planner itself, in every envelope.
 */
const CONSERVATIVE_BLACKLIST: readonly string[] = [
  "sudo",
  "su",
  "doas",
  "pkexec",
  "dd",
  "mkfs",
  "mkfs.ext2",
  "mkfs.ext3",
  "mkfs.ext4",
  "mkfs.xfs",
  "mkfs.btrfs",
  "mkfs.vfat",
  "mkfs.fat",
  "mkfs.msdos",
  "mkfs.exfat",
  "mkfs.ntfs",
  "mke2fs",
  "mkswap",
  "fdisk",
  "sfdisk",
  "cfdisk",
  "gdisk",
  "parted",
  "wipefs",
  "shred",
];

/**
 * Uncontained (no sandbox here, `_containment = "off"`, or `_network = "allow"`), the read-only tier
 * shrinks to programs that cannot run configuration or write files, naming no path outside the root.
 */
const UNCONTAINED_READ_ONLY: readonly string[] = ["ls", "pwd", "wc", "head", "tail", "cat", "stat", "file"];

/**
 * Ordinary developer commands (tests, builds, formatters, staging): allowed without asking only when
 * contained without network, naming no path outside the root; `auto_edit` runs them with a writable
 * workspace, `default` with a read-only one.
 */
export const DEV_COMMANDS: readonly string[] = [
  "npm test",
  "npm run",
  "npm exec",
  "npx",
  "node",
  "tsc",
  "prettier",
  "eslint",
  "make",
  "go test",
  "go build",
  "go vet",
  "cargo test",
  "cargo build",
  "cargo check",
  "pytest",
  "python3 -m pytest",
  "git add",
  "rg",
  "grep",
];

export const BUILTIN_ENVELOPES: Record<string, EnvelopeDef> = {
  read_only: {
    description: "Reads allowed; writes and the shell denied.",
    default_action: "deny",
    files: { read: { grant: "allow" }, write: { grant: "deny" } },
    shell: { grant: "deny" },
    web: { grant: "deny" },
  },
  default: {
    description:
      "Reads allowed; writes need approval; the shell needs approval except read-only commands, and developer commands when contained (run read-only).",
    default_action: "approve",
    files: { read: { grant: "allow" }, write: { grant: "approve" } },
    shell: {
      grant: "approve",
      prefix_allowlist: [...READ_ONLY_COMMANDS],
      blacklist: [...CONSERVATIVE_BLACKLIST],
      uncontained_allowlist: [...UNCONTAINED_READ_ONLY],
      contained_allowlist: [...DEV_COMMANDS],
      contained_mode: "read-only",
    },
    web: { grant: "approve" },
    // The process_* tools are of the shell axis (they act on running processes), so an envelope reads
    // them as commands it cannot see into; reading and stopping the session's own background
    // processes is named here instead. Input to one (process_input) stays a question.
    tools: { process_list: "allow", process_output: "allow", process_kill: "allow" },
  },
  auto_edit: {
    extends: "default",
    description:
      "Like default, but writes are allowed, and contained developer commands run with a writable workspace: the default for `latch call` and `latch mcp`.",
    files: { write: { grant: "allow" } },
    shell: { contained_mode: "workspace-write" },
  },
  strict: {
    description: "Everything needs approval.",
    default_action: "approve",
    files: { read: { grant: "approve" }, write: { grant: "approve" } },
    shell: { grant: "approve", blacklist: [...CONSERVATIVE_BLACKLIST] },
    web: { grant: "approve" },
  },
  ask_always: {
    description:
      "Everything needs approval, with no allowlist (extending it keeps that: it sets an empty prefix_allowlist).",
    default_action: "approve",
    files: { read: { grant: "approve" }, write: { grant: "approve" } },
    shell: { grant: "approve", prefix_allowlist: [], blacklist: [...CONSERVATIVE_BLACKLIST] },
    web: { grant: "approve" },
  },
};
