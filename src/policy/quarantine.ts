// The credential quarantine: paths no envelope, grant or extends can open to any tool, and that
// shell arguments may not name either. Matched against absolute (canonical) paths.
import picomatch from "picomatch";

export const QUARANTINE_GLOBS: readonly string[] = [
  "**/.ssh/**",
  "**/.aws/**",
  "**/.gnupg/**",
  "**/.kube/config",
  "**/.docker/config.json",
  "**/.env",
  "**/.env.*",
  "**/*.pem",
  "**/*.key",
  "**/id_rsa*",
  "**/id_ed25519*",
  "**/.netrc",
  "**/.npmrc",
  "**/.pypirc",
];

/** Files that match a quarantine glob but hold no secrets by convention. */
const EXCEPTIONS: readonly string[] = ["**/.env.example"];

const matchers = QUARANTINE_GLOBS.map((g) => ({ glob: g, test: picomatch(g, { dot: true }) }));
const exempt = picomatch([...EXCEPTIONS], { dot: true });

/** The quarantine glob an absolute path falls under, or undefined. A folder like `~/.ssh` itself counts. */
export function quarantineGlob(absPath: string): string | undefined {
  const p = absPath.replace(/\\/g, "/");
  if (exempt(p)) return undefined;
  for (const m of matchers) if (m.test(p) || m.test(p + "/x")) return m.glob;
  return undefined;
}
