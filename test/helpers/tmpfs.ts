// A real small disk for full-disk and read-only tests: a tmpfs, which only root may mount (CI runs as
// root); elsewhere the test fails loudly with the fix instead of skipping.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";

/** Mounts a tmpfs at `dir` (made if missing) with mount options `opts` ("size=1m", "ro,size=64k"); returns the unmount. */
export function mountTmpfs(dir: string, opts: string): () => void {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", opts, "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    throw new Error(`this test mounts a tmpfs (${opts}): run it as root (CI does): ${(err as Error).message}`, {
      cause: err,
    });
  }
  return () => execFileSync("umount", [dir]);
}
