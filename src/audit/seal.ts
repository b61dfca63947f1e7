// Sealed raw evidence (issue 29): with `--policy-evidence-seal <public key>`, the result as it was
// before the disclosure gate redacted or withheld it is kept in the policy log encrypted to the
// operator's X25519 public key. latch holds only the public key, so neither latch nor anyone who reads
// the log can open it; the operator opens it with `latch log unseal --key <private key>`.
// Each record has its own ephemeral key: X25519 → HKDF-SHA256 → AES-256-GCM.
import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError } from "../config/error.js";

const SEAL_ALG = "X25519-HKDF-SHA256-AES-256-GCM";

export interface Sealed {
  alg: typeof SEAL_ALG;
  /** The ephemeral public key, SPKI DER, base64. */
  epk: string;
  iv: string;
  tag: string;
  ct: string;
}

const MAKE_ONE =
  "make a pair with: openssl genpkey -algorithm X25519 -out seal.key && openssl pkey -in seal.key -pubout -out seal.pub (keep seal.key away from this machine)";

function readKey(file: string, kind: "public" | "private"): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`The ${kind} key \`${file}\` cannot be read (${(err as Error).message}); ${MAKE_ONE}.`);
  }
  let key: KeyObject;
  try {
    key = kind === "public" ? createPublicKey(pem) : createPrivateKey(pem);
  } catch (err) {
    throw new ConfigError(`\`${file}\` is not a PEM ${kind} key (${(err as Error).message}); ${MAKE_ONE}.`);
  }
  if (key.asymmetricKeyType !== "x25519")
    throw new ConfigError(`\`${file}\` is a ${key.asymmetricKeyType ?? "?"} key; sealing needs X25519: ${MAKE_ONE}.`);
  return key;
}

/** The operator's public key for `--policy-evidence-seal`; a private key given by mistake is refused. */
export function loadSealKey(file: string): KeyObject {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    // readKey says why
  }
  if (text.includes("PRIVATE KEY"))
    throw new ConfigError(
      `\`${file}\` is a private key: give latch the public one (openssl pkey -in ${file} -pubout -out seal.pub), and keep the private key away from this machine.`,
    );
  return readKey(file, "public");
}

export const loadUnsealKey = (file: string): KeyObject => readKey(file, "private");

function keyFor(shared: Buffer, epk: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", shared, epk, SEAL_ALG, 32));
}

export function seal(publicKey: KeyObject, value: unknown): Sealed {
  const eph = generateKeyPairSync("x25519");
  const epk = eph.publicKey.export({ type: "spki", format: "der" });
  const key = keyFor(diffieHellman({ privateKey: eph.privateKey, publicKey }), epk);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(JSON.stringify(value) ?? "null", "utf8"), cipher.final()]);
  return {
    alg: SEAL_ALG,
    epk: epk.toString("base64"),
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ct: ct.toString("base64"),
  };
}

/** Throws when the key is not the one sealed to, or the record was changed. */
export function unseal(privateKey: KeyObject, s: Sealed): unknown {
  if (s.alg !== SEAL_ALG) throw new Error(`sealed with ${String(s.alg)}, which this latch does not know`);
  const epk = Buffer.from(s.epk, "base64");
  const publicKey = createPublicKey({ key: epk, format: "der", type: "spki" });
  const key = keyFor(diffieHellman({ privateKey, publicKey }), epk);
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(s.iv, "base64"));
  decipher.setAuthTag(Buffer.from(s.tag, "base64"));
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(Buffer.from(s.ct, "base64")), decipher.final()]);
  } catch {
    throw new Error("it does not open with this key (another key sealed it, or the record was changed)");
  }
  return JSON.parse(plain.toString("utf8"));
}
