// The credential quarantine: paths no envelope, grant or extends can open to any tool, that shell
// arguments may not name either, and that the sandbox masks. Matched against absolute (canonical) paths.
import picomatch from "picomatch";
import { escapeRegex, GLOB_OPTIONS } from "./glob.js";

/**
 * The one list of credential stores, as paths relative to the home folder: the quarantine below
 * matches each one anywhere (`**\/<path>`, and everything under it), so it holds relative to the
 * workspace root and to the home folder alike, whichever contains the other; the sandbox masks each
 * one under the home folder (sandbox/masks.ts) and the shell's argument check refuses naming it
 * (shell/arguments.ts). Cloud, package-manager, git and agent credentials, key rings, password stores.
 */
export const SECRET_PATHS: readonly string[] = [
  ".ssh",
  ".aws",
  ".azure",
  ".gnupg",
  ".kube/config",
  ".docker/config.json",
  ".docker/contexts",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".pgpass",
  ".git-credentials",
  ".config/git/credentials",
  ".config/gh",
  ".config/hub",
  ".config/gcloud",
  ".claude/.credentials.json",
  ".vault-token",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".terraform.d/credentials.tfrc.json",
  ".local/share/keyrings",
  ".password-store",
];

/** Secrets by their name's shape, wherever they are: dotenv files, keys. */
const SECRET_NAME_GLOBS: readonly string[] = [
  "**/.env",
  "**/.env.*",
  "**/*.pem",
  "**/*.key",
  "**/id_rsa*",
  "**/id_ed25519*",
];

/**
 * Every quarantine glob, matched against absolute (canonical) paths. `**\/<path>/**` covers the path
 * itself too, file or folder (quarantineGlob and envelopeGlob also try `<path>/x`).
 */
export const QUARANTINE_GLOBS: readonly string[] = [...SECRET_PATHS.map((p) => `**/${p}/**`), ...SECRET_NAME_GLOBS];

/** Files that match a quarantine glob but hold no secrets by convention. */
const EXCEPTIONS: readonly string[] = ["**/.env.example"];

// Plain RegExps (picomatch.makeRe) behind a cheap segment test for the common "no" answer: every entry
// a walk meets is tried, and picomatch's own matcher cost ~20 µs an entry for the whole list.
const toRe = (g: string) => picomatch.makeRe(g, GLOB_OPTIONS);
const matchers = QUARANTINE_GLOBS.map((g) => ({ glob: g, re: toRe(g) }));
/** A cheap superset: a quarantined path has one of these segments (the first of each SECRET_PATHS entry). */
const CANDIDATE = new RegExp(
  `(?:^|/)(?:${[...new Set(SECRET_PATHS.map((p) => p.split("/")[0]))].map(escapeRegex).join("|")}|\\.env[^/]*|[^/]*\\.pem|[^/]*\\.key|id_rsa[^/]*|id_ed25519[^/]*)(?:/|$)`,
  "s",
);
const exempt = EXCEPTIONS.map(toRe);

/** The quarantine glob an absolute path falls under, or undefined. A folder like `~/.ssh` itself counts. */
export function quarantineGlob(absPath: string): string | undefined {
  const p = absPath.includes("\\") ? absPath.replace(/\\/g, "/") : absPath;
  const folder = p + "/x";
  if (!CANDIDATE.test(p)) return undefined;
  if (exempt.some((re) => re.test(p))) return undefined;
  for (const m of matchers) if (m.re.test(p) || m.re.test(folder)) return m.glob;
  return undefined;
}

/** `.env.` followed by anything but `example`, as globs: rg's globs have no "except". */
function envExceptExample(): string[] {
  const word = "example";
  const out = ["**/.env.", "**/.env.[!e]*"];
  for (let k = 1; k < word.length; k++)
    out.push(`**/.env.${word.slice(0, k)}`, `**/.env.${word.slice(0, k)}[!${word[k]}]*`);
  out.push(`**/.env.${word}?*`);
  return out;
}

/**
 * The quarantine as ripgrep exclusions (`-g` globs): the same set as quarantineGlob, so rg neither
 * lists nor searches a quarantined file (test/policy/visibility.test.ts holds the two to the same
 * answers on real files). A folder glob `**\/x/**` leaves out the folder x itself, as the walk does.
 */
export const QUARANTINE_RG_EXCLUDES: readonly string[] = QUARANTINE_GLOBS.flatMap((g) =>
  g === "**/.env.*" ? envExceptExample() : [g.endsWith("/**") ? g.slice(0, -3) : g],
).map((g) => "!" + g);
