// The names attached tools are offered under: `<server>__<tool>` (and `<spec>__<operationId>`), in
// the characters every MCP client accepts, at most 64 of them. A name cut to fit keeps a hash of the
// whole, so two long names do not meet; a name that still meets a built-in tool or another upstream's
// is refused, with the reason, rather than one shadowing the other.
import { createHash } from "node:crypto";

const MAX_TOOL_NAME = 64;

/** `<server>__<tool>`, sanitized (A–Z a–z 0–9 _ -) and cut to 64 characters with a hash of the whole. */
export function exposedName(server: string, tool: string): string {
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, "_");
  const whole = `${server}__${clean}`;
  if (whole.length <= MAX_TOOL_NAME && clean === tool) return whole;
  // A name changed by sanitizing carries the hash too: `a.b` and `a_b` stay two names.
  const tag = createHash("sha256").update(tool).digest("hex").slice(0, 8);
  return `${whole.slice(0, MAX_TOOL_NAME - tag.length - 1)}_${tag}`;
}

export interface Named {
  /** The name clients see. */
  name: string;
  server: string;
  /** The upstream's own name for it. */
  upstream: string;
}

/**
 * Which of `tools` may be offered: a name taken by a built-in tool (or one of its aliases), by an
 * earlier server's tool, or twice by the same server is refused; each refusal says why.
 */
export function refuseCollisions<T extends Named>(
  tools: readonly T[],
  builtins: ReadonlySet<string>,
): { offered: T[]; refused: { tool: T; reason: string }[] } {
  const offered: T[] = [];
  const refused: { tool: T; reason: string }[] = [];
  const seen = new Map<string, T>();
  for (const t of tools) {
    if (builtins.has(t.name)) {
      refused.push({ tool: t, reason: `\`${t.name}\` is the name of latch's own tool; it would shadow it` });
      continue;
    }
    const first = seen.get(t.name);
    if (first) {
      refused.push({
        tool: t,
        reason: `\`${t.upstream}\` of \`${t.server}\` and \`${first.upstream}\` of \`${first.server}\` both become \`${t.name}\`; neither is guessed at`,
      });
      const i = offered.indexOf(first);
      if (i >= 0) {
        offered.splice(i, 1);
        refused.push({ tool: first, reason: `its name \`${t.name}\` is taken twice` });
      }
      continue;
    }
    seen.set(t.name, t);
    offered.push(t);
  }
  return { offered, refused };
}
