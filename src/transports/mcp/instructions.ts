// What the model is told at initialize: where it is (the workspace folder, which only refusals revealed
// before), what it must not take for granted, and how to use the tools well.
import type { Host } from "../../host/create-host.js";

export const GUIDANCE = [
  "latch gives you this machine's files and shell, under a policy that decides every call.",
  "- Prefer the local_fs tools (read_file, grep, find_files, list_dir, stat_file) over the shell for reading and searching files: they are bounded, gitignore-aware, and their reads count for editing.",
  "- Read before editing: write_file on an existing file needs a full read_file of its current content in this session; edit_file and sed need a read_file or read_file_range. If a write is refused as stale, read the file again, then retry.",
  "- Prefer edit_file (exact string, must match once) over rewriting whole files.",
  "- Split compound shell lines: pipes, redirections, $VAR, globs and subshells are refused under a policy; run each part as its own call, or use the file tools.",
  "- A refusal that says it is a policy decision is final: do not retry the same call; ask the user or take another way.",
];

/** The instructions, naming the workspace when it is known at initialize (else how it will be chosen). */
export function instructionsFor(host: Host | undefined, fallbackRoot: string): string {
  const where = host
    ? [
        `Workspace: ${host.root}. Relative paths resolve there; the file tools and the shell work inside it${host.root !== host.workspace ? ` (tools_policies.local_fs._allowed_dir limits them to this folder of ${host.workspace})` : ""}, and a path outside it is refused.`,
        `Envelope (approval rules): ${host.envelope.name}: ${host.envelope.description}`,
      ]
    : [
        `Workspace: the first folder your MCP client offers as a root, else ${fallbackRoot}. Relative paths resolve there; a path outside it is refused.`,
      ];
  return [GUIDANCE[0], ...where, ...GUIDANCE.slice(1)].join("\n");
}
