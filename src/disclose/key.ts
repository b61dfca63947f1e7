// The key of the disclosure fingerprints (issue 29): 32 random bytes in the state dir, 0600, made
// once. A fingerprint (HMAC-SHA256) lets a log reader see that two findings are the same secret, and
// match a secret they hold, without the log ever holding it; without the key it cannot be guessed.
import { randomBytes } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const KEY_FILE = "disclosure.key";

export function disclosureKey(stateDir: string): Buffer {
  const file = path.join(stateDir, KEY_FILE);
  try {
    const key = readFileSync(file);
    if (key.length === 32) return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const key = randomBytes(32);
  try {
    writeFileSync(file, key, { mode: 0o600, flag: "wx" });
  } catch (err) {
    // Another latch made it first: use theirs, so fingerprints agree across runs.
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return readFileSync(file);
    throw err;
  }
  chmodSync(file, 0o600);
  return key;
}
