// Nesting is bounded before anything walks a message recursively (the SDK's schemas, zod, the policy
// log's canonical JSON): 10,000 nested arrays ran those out of stack, an internal error (-32603)
// instead of the client's own (-32602). The walk here keeps its own stack.

/** The deepest nesting of arrays and objects a message may have (the whole JSON-RPC message). */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests arrays and objects deeper than `limit`. */
export function nestsDeeper(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The -32602 message for a message past the limit. */
export const TOO_DEEP = `Invalid params: the message nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels, latch's limit. Send flatter arguments.`;
