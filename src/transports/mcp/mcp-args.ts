// `latch mcp`'s arguments as commander reads them, for the entry, which answers before commander loads
// (answer-cache.ts): an option that takes a value takes the next argument whatever it looks like
// (`--host --root=A` sets the host to "--root=A" and names no root), so a hand scan that only looked
// for `--root` would name a workspace, or a state dir, the program does not use. A test holds the list
// below to the program's own options (test/transports/elsewhere.test.ts).

/** The options of `latch mcp` that take a value (`--flag <value>`, or `--flag=value`). */
export const VALUE_OPTIONS = new Set([
  "--root",
  "--config",
  "--agent",
  "--shape",
  "--state-dir",
  "--state",
  "--envelope",
  "--policy",
  "--policy-log",
  "--log-retention",
  "--default-authorization",
  "--policy-evidence-seal",
  "--log-sync",
  "--host",
  "--port",
  "--session-idle",
  "--max-sessions",
  "--body-timeout",
  "--approval-wait",
]);

/** One option as given: its name, its value if it takes one, and where that value is (`at`, after `prefix`). */
export interface GivenOption {
  name: string;
  value?: string;
  at?: number;
  prefix?: string;
}

/**
 * The options after `mcp`, in order; undefined where the reading is not certain: no `mcp` first, a `--`,
 * an argument that is not an option, or an option that takes a value with none after it.
 */
export function mcpOptions(args: readonly string[]): GivenOption[] | undefined {
  if (args[0] !== "mcp") return undefined;
  const out: GivenOption[] = [];
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("--") || a === "--") return undefined;
    const eq = a.indexOf("=");
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (!VALUE_OPTIONS.has(name)) {
      if (eq > 0) return undefined; // a flag given a value: the parser's to refuse
      out.push({ name });
    } else if (eq > 0) out.push({ name, value: a.slice(eq + 1), at: i, prefix: `${name}=` });
    else if (i + 1 < args.length) out.push({ name, value: args[i + 1], at: ++i, prefix: "" });
    else return undefined;
  }
  return out;
}
