// Step 8's backstop: tools bound their own content, but no result may flood the model. If one is
// still far over the limit, its longest strings are cut, each with a marker of what was cut.

export function boundResult(result: unknown, maxBytes: number): unknown {
  const limit = maxBytes * 2 + 4096;
  if (jsonSizeAtMost(result) <= limit) return result; // nearly every result: no need to serialise it here
  let size = Buffer.byteLength(JSON.stringify(result) ?? "");
  if (size <= limit) return result;
  const copy: unknown = structuredClone(result);
  for (let round = 0; round < 64 && size > limit; round++) {
    const longest = findLongest(copy);
    if (!longest) break;
    const { holder, key, value } = longest;
    const keep = Math.max(0, value.length - Math.ceil((size - limit) * 1.1) - 64);
    const cut = value.length - keep;
    holder[key] =
      `${value.slice(0, keep)}\n[… ${cut} characters cut by latch's output limit (_max_output_bytes = ${maxBytes}); narrow the request to see them …]`;
    size = Buffer.byteLength(JSON.stringify(copy) ?? "");
  }
  return copy;
}

type Holder = Record<string | number, unknown>;

/** An upper bound of the UTF-8 size of JSON.stringify(node): a UTF-16 unit escapes to at most 6 bytes. */
function jsonSizeAtMost(node: unknown): number {
  if (typeof node === "string") return node.length * 6 + 2;
  if (node === null || typeof node !== "object") return 32; // numbers, booleans, null
  let size = 2;
  for (const [k, v] of Object.entries(node as Holder)) size += k.length * 6 + 4 + jsonSizeAtMost(v);
  return size;
}

function findLongest(node: unknown): { holder: Holder; key: string | number; value: string } | undefined {
  let best: { holder: Holder; key: string | number; value: string } | undefined;
  const visit = (n: unknown) => {
    if (n === null || typeof n !== "object") return;
    for (const [k, v] of Object.entries(n as Holder)) {
      const key = Array.isArray(n) ? Number(k) : k;
      if (typeof v === "string") {
        if (!best || v.length > best.value.length) best = { holder: n as Holder, key, value: v };
      } else visit(v);
    }
  };
  visit(node);
  return best && best.value.length > 200 ? best : undefined;
}
