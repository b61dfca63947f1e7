// The environment a child process gets. local_shell passes the server's own through, minus names
// that look like secrets (_env_deny: *KEY*, *TOKEN*, *SECRET*, *PASS*, *PAT*, *AUTH* …, unless
// _env_allow names them) and latch's own variables; PATH is pinned to the absolute
// directories captured at startup, so a wrapper's own PATH lookup finds what the planner checked.
// runBounded then adds LATCH_RUN, a value of the run's own that finds its processes (procs.ts).

/** Does `name` match one of the patterns (globs with `*`, case-insensitive)? */
export function envNameDenied(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globRegex(p).test(name));
}

function globRegex(glob: string): RegExp {
  const body = glob
    .split("*")
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "i");
}

export function shellEnvironment(
  startup: Readonly<NodeJS.ProcessEnv>,
  deny: readonly string[],
  pathDirs: readonly string[],
  allow: readonly string[] = [],
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(startup)) {
    if (v === undefined || k.startsWith("LATCH_")) continue;
    if (envNameDenied(k, deny) && !envNameDenied(k, allow)) continue;
    env[k] = v;
  }
  env.PATH = pathDirs.join(":");
  return env;
}

/** run_tool's cleared environment: the pinned PATH and the C locale, nothing else. */
export function catalogEnvironment(pathDirs: readonly string[]): NodeJS.ProcessEnv {
  return { PATH: pathDirs.join(":"), LANG: "C", LC_ALL: "C" };
}
