// Signed checkpoints: a run's head (its line count and last hash) signed with an ed25519 key that
// lives in the instance's state dir (0600), never in the database. A database owner can rewrite a
// table and re-chain every hash; they cannot sign the new head. Each checkpoint goes into the store
// and into an export file beside the key, so verify has a copy the database owner does not hold.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import { appendFileSync, closeSync, constants, openSync, readFileSync, writeSync } from "node:fs";
import path from "node:path";
import { canonicalJson } from "../audit/canonical-json.js";

const KEY_FILE = "checkpoint-key.pem";
export const CHECKPOINT_FILE = "checkpoints.jsonl";

interface CheckpointBody {
  type: "latch_checkpoint";
  run_id: string;
  host: string;
  file: string;
  lines: number;
  head: string;
  at: string;
}

export interface SignedCheckpoint extends CheckpointBody {
  /** The signer's public key (SPKI DER, base64). */
  public_key: string;
  /** ed25519 over the canonical JSON of the body, base64. */
  signature: string;
}

export interface Signer {
  publicKey: string;
  sign(body: CheckpointBody): SignedCheckpoint;
}

/** The state dir's key, made (O_EXCL, 0600) at first use. */
export function stateDirSigner(stateDir: string): Signer {
  const file = path.join(stateDir, KEY_FILE);
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(file, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    const made = generateKeyPairSync("ed25519").privateKey;
    const pem = made.export({ type: "pkcs8", format: "pem" }) as string;
    try {
      const fd = openSync(
        file,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      writeSync(fd, pem);
      closeSync(fd);
      key = made;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      key = createPrivateKey(readFileSync(file, "utf8")); // another process of this state dir made it first
    }
  }
  const publicKey = publicKeyOf(key);
  return {
    publicKey,
    sign: (body) => ({
      ...body,
      public_key: publicKey,
      signature: sign(null, Buffer.from(canonicalJson(body)), key).toString("base64"),
    }),
  };
}

function publicKeyOf(key: KeyObject): string {
  return (createPublicKey(key).export({ type: "spki", format: "der" }) as Buffer).toString("base64");
}

/** The public key of the state dir's key, if it has one (verify trusts it). */
export function stateDirPublicKey(stateDir: string): string | undefined {
  try {
    return publicKeyOf(createPrivateKey(readFileSync(path.join(stateDir, KEY_FILE), "utf8")));
  } catch {
    return undefined;
  }
}

/** Append a checkpoint to the export file (0600). */
export function exportCheckpoint(stateDir: string, cp: SignedCheckpoint): void {
  appendFileSync(path.join(stateDir, CHECKPOINT_FILE), canonicalJson(cp) + "\n", { mode: 0o600 });
}

/** Whether the signature is the key's over the body. */
export function signatureOk(cp: SignedCheckpoint): boolean {
  const { public_key, signature, ...body } = cp;
  try {
    const key = createPublicKey({ key: Buffer.from(public_key, "base64"), format: "der", type: "spki" });
    return verify(null, Buffer.from(canonicalJson(body)), key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

/** The checkpoints of an export file; a line that is not one is named. */
export function readCheckpoints(file: string): {
  checkpoints: SignedCheckpoint[];
  bad: { line: number; why: string }[];
} {
  const checkpoints: SignedCheckpoint[] = [];
  const bad: { line: number; why: string }[] = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, i) => {
      if (text === "") return;
      try {
        const cp = JSON.parse(text) as SignedCheckpoint;
        if (cp.type !== "latch_checkpoint" || typeof cp.run_id !== "string") throw new Error("not a checkpoint");
        checkpoints.push(cp);
      } catch (err) {
        bad.push({ line: i + 1, why: (err as Error).message });
      }
    });
  return { checkpoints, bad };
}
