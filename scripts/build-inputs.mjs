// The build's inputs as one digest (scripts/build.mjs keeps dist/ built from the same digest as it is).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/**
 * What the build reads besides node itself: the sources, the build's scripts and configs, and the
 * installed packages as package-lock.json pins them (node_modules' own lockfile is written after
 * `npm ci` has run `prepare`, so it would make the build after every install look stale).
 */
export const INPUTS = [
  "src",
  "scripts/build.mjs",
  "scripts/build-inputs.mjs",
  "scripts/bundle.mjs",
  "scripts/bundle-externals.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
];

/** sha256 of this Node (the code cache is its own), and of each input's files: their paths and bytes. */
export function inputsDigest(repo) {
  const h = createHash("sha256");
  h.update(`${process.version} ${process.arch} ${process.execPath}\n`);
  for (const input of INPUTS) {
    const full = path.join(repo, input);
    if (!existsSync(full)) {
      h.update(`${input}: none\n`);
      continue;
    }
    const files = statSync(full).isDirectory()
      ? readdirSync(full, { recursive: true, withFileTypes: true })
          .filter((d) => d.isFile())
          .map((d) => path.relative(repo, path.join(d.parentPath, d.name)))
          .sort()
      : [input];
    for (const f of files)
      h.update(`${f}\n`)
        .update(readFileSync(path.join(repo, f)))
        .update("\n");
  }
  return h.digest("hex");
}
