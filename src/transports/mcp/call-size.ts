// What a transport can learn of a tools/call from its raw bytes, before decoding or parsing them: the
// id, the tool's name and how many bytes of JSON its arguments take. A call whose arguments are longer
// than its tool could accept (ToolSpec.argumentLimit) is answered -32602 at once: a refused megabyte
// then costs one scan of the bytes, not the string, the parse and the call path's copies, which V8
// keeps as large objects until its next full collection (bench/background-bounds.ts measures it).
// The limit is set above what the schema can accept when written plainly, so it refuses no call the
// tool would take; anything the scan cannot read plainly (bad JSON, an escaped key) takes the
// ordinary path, where the parse or the tool's schema answers.
import type { ToolSpec } from "../../tools/define.js";

export interface CallHead {
  id: string | number;
  /** The tool's name (params.name). */
  name: string;
  /** Bytes of JSON that params.arguments takes. */
  argumentBytes: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Keys and short values longer than this are not decoded (none that matters is). */
const SHORT = 256;

function skipSpace(b: Uint8Array, i: number): number {
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  return i;
}

/** Index after the string that opens at `i`; -1 when it does not close. */
function stringEnd(b: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q < 0) return -1;
    let k = q - 1;
    while (k > i && b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1; // an even run of backslashes: this quote closes it
    from = q + 1;
  }
}

/** Index after the JSON value that starts at `i`; -1 when it is not one (roughly: the parse decides). */
function valueEnd(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const d = b[j];
      if (d === QUOTE) {
        j = stringEnd(b, j) - 1;
        if (j < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < b.length && b[j] !== 0x2c && b[j] !== 0x7d && b[j] !== 0x5d && b[j] > 0x20) j++;
  return j > i ? j : -1;
}

/** A short string or number, decoded; undefined for anything else. */
function shortValue(b: Buffer, start: number, end: number): unknown {
  if (end - start > SHORT) return undefined;
  try {
    return JSON.parse(b.toString("utf8", start, end));
  } catch {
    return undefined;
  }
}

/**
 * The members of the object at `i`, each as its key and its value's range, the last of a repeated key
 * winning (as JSON.parse does); undefined when it is not a plain object.
 */
function members(b: Buffer, i: number): Map<string, [number, number]> | undefined {
  const out = new Map<string, [number, number]>();
  i = skipSpace(b, i);
  if (b[i] !== 0x7b) return undefined;
  i = skipSpace(b, i + 1);
  if (b[i] === 0x7d) return out;
  for (;;) {
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = stringEnd(b, i);
    if (keyEnd < 0) return undefined;
    const key = shortValue(b, i, keyEnd);
    i = skipSpace(b, keyEnd);
    if (b[i] !== 0x3a) return undefined;
    const start = skipSpace(b, i + 1);
    const end = valueEnd(b, start);
    if (end < 0) return undefined;
    if (typeof key === "string") out.set(key, [start, end]);
    i = skipSpace(b, end);
    if (b[i] === 0x7d) return out;
    if (b[i] !== 0x2c) return undefined;
    i = skipSpace(b, i + 1);
  }
}

/** The head of a tools/call request read from its bytes; undefined for any other message, or one the scan cannot read. */
export function peekCall(line: Buffer): CallHead | undefined {
  const top = members(line, 0);
  const method = top?.get("method");
  const params = top?.get("params");
  const id = top?.get("id");
  if (!method || !params || !id || shortValue(line, ...method) !== "tools/call") return undefined;
  const idValue = shortValue(line, ...id);
  if (typeof idValue !== "string" && typeof idValue !== "number") return undefined; // the answer needs its id
  const inner = members(line, params[0]);
  const name = inner?.get("name");
  const args = inner?.get("arguments");
  if (!name || !args) return undefined;
  const nameValue = shortValue(line, ...name);
  if (typeof nameValue !== "string") return undefined;
  return {
    id: idValue,
    name: nameValue,
    argumentBytes: args[1] - args[0],
  };
}

/** The tools' argument limits, as offered at the time of the call. */
export interface ArgumentLimits {
  /** A tool's limit, by name or alias. */
  of(tool: string): ToolSpec["argumentLimit"];
  /** The smallest limit of any tool (Infinity for none): a shorter line cannot be over one. */
  smallest(): number;
}

export function argumentLimits(tools: () => readonly ToolSpec[]): ArgumentLimits {
  return {
    of: (name) => tools().find((t) => t.name === name || t.aliases.includes(name))?.argumentLimit,
    smallest: () => tools().reduce((least, t) => Math.min(least, t.argumentLimit?.bytes ?? Infinity), Infinity),
  };
}

const kib = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`);

/** The -32602 message for a call past its tool's limit, or undefined when the call is within it (or not a call). */
export function overLimit(
  line: Buffer,
  limits: ArgumentLimits | undefined,
): { id: CallHead["id"]; message: string } | undefined {
  // Most calls are far shorter than any limit: the scan (17 µs for a read's ~150 bytes) is skipped.
  if (!limits || line.length <= limits.smallest()) return undefined;
  const head = peekCall(line);
  const limit = head && limits.of(head.name);
  if (!head || !limit || head.argumentBytes <= limit.bytes) return undefined;
  return {
    id: head.id,
    message: `Invalid params: the arguments of this ${head.name} call are ${kib(head.argumentBytes)} of JSON, over latch's limit for one ${head.name} call (${kib(limit.bytes)}), so latch did not read them. ${limit.fix}`,
  };
}
