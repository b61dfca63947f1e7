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

/**
 * The instructions an initialize answer carries (the SDK's handler in server.ts and the stdio server's
 * early answer, early.ts): the workspace (every root) when the host is known and serves its own roots,
 * else how the roots will be chosen (`clientRoots`: they come from the client after initialize).
 */
export function instructionsFor(host: Host | undefined, clientRoots: boolean, roots = host?.roots() ?? []): string {
  const fallbackRoot = host?.workspace ?? process.cwd();
  const where =
    host && !clientRoots
      ? [...rootLines(roots), `Envelope (approval rules): ${host.envelope.name}: ${host.envelope.description}`]
      : [
          `Workspace: the folders your MCP client offers as roots, else ${fallbackRoot}. Relative paths resolve in the first root; a path in another root is written absolute (a call works in one root; local_shell works in another root with \`cwd\` set there). A path outside every root is refused. When the client changes its roots, latch follows.`,
        ];
  return [GUIDANCE[0], ...where, ...GUIDANCE.slice(1)].join("\n");
}

/**
 * The instructions of a host that serves one root, the whole workspace, as they read with `shown` for
 * that root (answer-cache.ts keeps them with the root's place marked); undefined for any other host.
 */
export function instructionsAt(host: Host, shown: string): string | undefined {
  const roots = host.roots();
  if (roots.length !== 1 || roots[0].root !== roots[0].workspace) return undefined;
  return instructionsFor(host, false, [{ root: shown, workspace: shown }]);
}

function rootLines(roots: readonly { root: string; workspace: string }[]): string[] {
  const limited = (r: { root: string; workspace: string }) =>
    r.root !== r.workspace
      ? ` (tools_policies.local_fs._allowed_dir limits them to this folder of ${r.workspace})`
      : "";
  const [first, ...others] = roots;
  if (!first) return ["Workspace: none: the client offers no root now, so the tools reach no files."];
  const lines = [
    `Workspace: ${first.root}. Relative paths resolve there; the file tools and the shell work inside it${limited(first)}, and a path outside it is refused.`,
  ];
  if (others.length)
    lines.push(
      `Other roots served (write paths there absolute; a call works in one root, local_shell with \`cwd\` there): ${others.map((r) => r.root + limited(r)).join("; ")}.`,
    );
  return lines;
}
