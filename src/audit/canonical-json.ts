// Canonical JSON for hashing: object keys sorted, no spaces, so a record hashes the same wherever
// it is written and read back. undefined fields are dropped, as JSON.stringify does.
import { hash } from "node:crypto";

// Every log line is hashed this way, so it is written as plain loops (no map/filter/join garbage).
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const s = JSON.stringify(value);
    return s === undefined ? "null" : s;
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++)
      out += (i ? "," : "") + (value[i] === undefined ? "null" : canonicalJson(value[i]));
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  let out = "{";
  for (const k of Object.keys(obj).sort()) {
    if (obj[k] === undefined) continue;
    out += (out.length > 1 ? "," : "") + JSON.stringify(k) + ":" + canonicalJson(obj[k]);
  }
  return out + "}";
}

export function sha256Json(value: unknown): string {
  return sha256Text(canonicalJson(value));
}

/** One-shot (crypto.hash): no Hash object per call, ~1 µs less a hash, and a read hashes five times. */
export function sha256Text(text: string): string {
  return hash("sha256", text, "hex");
}
