// Whether an envelope denies a tool whatever its arguments: such a tool is not listed to MCP clients,
// so a model does not spend calls on it. Conservative: "yes" only when evaluateEnvelope's order (see
// envelope-eval.ts) cannot reach anything but deny for any call of the tool; any rule that could allow
// or ask for some call (approve_paths, always_allow, a shell allowlist) keeps the tool listed.
import type { Axis } from "./effect.js";
import { toolMatches, type Envelope } from "./envelope.js";

export function deniedOutright(env: Envelope, tool: { name: string; axis: Axis }): boolean {
  const name = tool.name;
  const matches = (pattern: string) => toolMatches(pattern, name);
  // 1. an always_deny rule on the tool with no condition
  if (env.always_deny.some((r) => matches(r.tool) && !r.when_path && !r.when_command)) return true;
  const axis = tool.axis;
  // 2–3. approve_paths on the tool's path axes can turn a later deny into a question
  const pathAxes =
    axis === "files.write" ? [env.files.write, env.files.read] : axis === "files.read" ? [env.files.read] : [];
  if (pathAxes.some((ax) => ax.approve_paths.length > 0)) return false;
  if (axis === "web" && env.web.allow_domains.length > 0) return false;
  // 4. the tools table: its most specific matching pattern decides
  const table = Object.entries(env.tools).filter(([p]) => matches(p));
  if (table.length > 0) {
    const exact = table.find(([p]) => p === name);
    if (exact) return exact[1] === "deny";
    return table.every(([, a]) => a === "deny");
  }
  // 5. always_allow could allow some call
  if (env.always_allow.some((r) => matches(r.tool))) return false;
  // 6. the axis grant, else 7. default_action
  if (axis === "shell") {
    if (env.shell.prefix_allowlist.length > 0 || env.shell.ask_always.length > 0) return false;
    return (env.shell.grant ?? env.default_action) === "deny";
  }
  const grant =
    axis === "files.read"
      ? env.files.read.grant
      : axis === "files.write"
        ? env.files.write.grant
        : axis === "web"
          ? env.web.grant
          : undefined;
  return (grant ?? env.default_action) === "deny";
}
