// The folders the sandbox's walks do not enter, by name: a package manager's copy of the registry.
// node_modules holds thousands of folders in a JavaScript project (a warm walk of this repository is 64
// folders without it, 1,849 with it), site-packages as many in a Python virtual environment (6,000
// folders cost every contained call ~180 ms, three walks of one lstat each). Packages ship test keys and
// CA bundles there (certifi's cacert.pem), not the user's secrets. A repository git may enter there is
// found through the indexes' gitlinks (gitlinks.ts), and a link's way into one is followed (linked.ts).
// docs/security.md (known limits) says what is left.
import path from "node:path";

export const NOT_WALKED: ReadonlySet<string> = new Set(["node_modules", "site-packages"]);

/** Whether a path's bytes may name something below a folder the walks do not enter (a superset: by substring). */
export function mayBeNotWalked(name: Uint8Array): boolean {
  const b = Buffer.from(name.buffer, name.byteOffset, name.byteLength);
  for (const n of NOT_WALKED) if (b.includes(n)) return true;
  return false;
}

/** Whether `p` (below `root`) is in or below a folder the walks do not enter: latch did not look there before a call. */
export function belowNotWalked(root: string, p: string): boolean {
  return path
    .relative(root, p)
    .split(path.sep)
    .some((n) => NOT_WALKED.has(n));
}

/** The folders the walks do not enter, as a result says them. */
export const NOT_WALKED_TEXT = [...NOT_WALKED].join(" or ");
