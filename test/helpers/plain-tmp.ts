// Temp folders for what cannot take the user's TMPDIR as it is. Some consumers split or bound a path:
// LD_PRELOAD splits at spaces and colons, a Unix socket's path holds at most 107 bytes (chromium's
// singleton socket goes under its TMPDIR), and latch's shell refuses a program path outside printable
// ASCII. Under a TMPDIR such as "/home/Jürgen/my tmp/…" those go in the first plain folder of
// TMPDIR, /tmp, /var/tmp, /dev/shm. With none, the test fails naming the cause and the fix.
import { accessSync, constants, mkdtempSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Printable ASCII without a colon or semicolon (LD_PRELOAD and LD_LIBRARY_PATH separators). */
const PLAIN = /^[\x21-\x39\x3c-\x7e]+$/;

/**
 * The plain, writable temp folders of this machine, TMPDIR's first, each at most `maxLength`
 * characters; `why` (what needs it) goes in the error when there is none.
 */
export function plainTmpParents(why: string, maxLength = 4096): string[] {
  const tried: string[] = [];
  const found: string[] = [];
  for (const dir of new Set([os.tmpdir(), "/tmp", "/var/tmp", "/dev/shm"])) {
    if (!PLAIN.test(dir) || dir.length > maxLength) {
      tried.push(`${dir} (not plain ASCII without spaces, or over ${maxLength} characters)`);
      continue;
    }
    try {
      accessSync(dir, constants.W_OK);
      found.push(dir);
    } catch (err) {
      tried.push(`${dir} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  if (found.length > 0) return found;
  throw new Error(
    `${why} needs a writable temp folder whose path is printable ASCII without spaces or colons, at most ${maxLength} characters; ` +
      `none here: ${tried.join(", ")}. Make /tmp writable or set TMPDIR to such a folder.`,
  );
}

/** A new folder in the first of plainTmpParents(); the caller removes it. */
export function plainTmpDir(prefix: string, why: string, maxLength = 4096): string {
  return realpathSync(mkdtempSync(path.join(plainTmpParents(why, maxLength)[0], prefix)));
}
