// JSON-RPC's small parts, without the MCP SDK: the stdio server uses them before it loads the SDK.

export type Id = string | number;

/** JSON-RPC's internal error, as the SDK answers a handler's throw without a code of its own. */
const INTERNAL_ERROR = -32603;

/** A handler's throw as the SDK answers it: its own numeric code, else internal error; its message. */
export function errorOf(err: unknown): { code: number; message: string; data?: unknown } {
  const e = err as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  return {
    code: Number.isSafeInteger(e?.code) ? (e!.code as number) : INTERNAL_ERROR,
    message: typeof e?.message === "string" && e.message !== "" ? e.message : "Internal error",
    ...(e?.data !== undefined ? { data: e.data } : {}),
  };
}

/** A request id as the SDK's schema takes one: a string or a whole number. */
export function isId(v: unknown): v is Id {
  return typeof v === "string" || Number.isSafeInteger(v);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every own key of `o` is one of `keys`. */
export function onlyKeys(o: Record<string, unknown>, keys: readonly string[]): boolean {
  for (const k in o) if (!keys.includes(k)) return false;
  return true;
}
