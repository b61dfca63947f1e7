// Known secrets (issue 29, detector a): the values of latch's own startup environment whose names
// say they are secrets, and values the host is told about (its HTTP bearer token), each matched
// exactly and in the forms a command turns it into: base64 (standard and URL-safe, at any of the
// three alignments it can have inside a longer base64 text), URL-encoded and hex. A value shorter
// than MIN_KNOWN_LENGTH is not looked for: it would match ordinary words (docs/security.md).
import { envNameDenied } from "../process/environment.js";

/** The names whose values are secrets (globs, case-insensitive); EXA_API_KEY and LATCH_TOKEN are among them. */
const SECRET_ENV_NAMES: readonly string[] = ["*TOKEN*", "*KEY*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*"];
export const MIN_KNOWN_LENGTH = 8;

export interface Needle {
  rule: string;
  text: string;
}

/** Every form of every known secret, longest first (a longer form wins where two overlap). */
export function knownNeedles(env: Readonly<NodeJS.ProcessEnv>, extra: Record<string, string> = {}): Needle[] {
  const named: [string, string][] = [];
  for (const [k, v] of Object.entries(env))
    if (v !== undefined && v.length >= MIN_KNOWN_LENGTH && envNameDenied(k, SECRET_ENV_NAMES)) named.push([k, v]);
  for (const [k, v] of Object.entries(extra)) if (v.length >= MIN_KNOWN_LENGTH) named.push([k, v]);
  const out = new Map<string, Needle>();
  const add = (rule: string, text: string) => {
    if (text.length >= MIN_KNOWN_LENGTH && !out.has(text)) out.set(text, { rule, text });
  };
  for (const [name, value] of named) {
    const rule = `known-secret:${name}`;
    add(rule, value);
    const bytes = Buffer.from(value, "utf8");
    for (const b64 of base64Cores(bytes)) {
      add(`${rule}:base64`, b64);
      add(`${rule}:base64`, b64.replace(/\+/g, "-").replace(/\//g, "_"));
    }
    add(`${rule}:url`, encodeURIComponent(value));
    add(`${rule}:hex`, bytes.toString("hex"));
    add(`${rule}:hex`, bytes.toString("hex").toUpperCase());
  }
  return [...out.values()].sort((a, b) => b.text.length - a.text.length);
}

/**
 * The base64 characters that depend on the value alone, at each of the 3 offsets it may start at in
 * a longer base64 text: a partial group at either end mixes in the neighbours' bits and is dropped.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [bytes.toString("base64")]; // the value encoded on its own, padding and all
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString("base64");
    const head = k === 0 ? 0 : 4; // the first group holds k zero bytes of the unknown prefix
    const full = Math.floor((k + bytes.length) / 3) * 4; // groups made of known bytes only at the end
    const core = enc.slice(head, full);
    if (core.length >= 12) cores.push(core);
  }
  return cores;
}
