// The first messages a client sends, checked by hand without the MCP SDK: a plain initialize and a
// plain tools/list are the shapes the SDK's schemas pass unchanged, so an answer given without the SDK
// (early.ts, before the SDK loads; answer-cache.ts, before the program loads) is the one it would give.
import { isId, isObject, onlyKeys } from "./rpc.js";

type Message = Record<string, unknown>;

const REQUEST_KEYS = ["jsonrpc", "id", "method", "params"];

/**
 * A plain initialize: `{jsonrpc, id, method, params: {protocolVersion, capabilities, clientInfo}}` with
 * each part of the type the SDK's InitializeRequestSchema asks, no `_meta` and nothing unknown where the
 * schema is strict. Anything else is left to the SDK, which answers it or says what is wrong with it.
 */
export function plainInitialize(m: Message): boolean {
  if (m.jsonrpc !== "2.0" || m.method !== "initialize" || !isId(m.id) || !onlyKeys(m, REQUEST_KEYS)) return false;
  const p = m.params;
  if (!isObject(p) || !onlyKeys(p, ["protocolVersion", "capabilities", "clientInfo"])) return false;
  if (typeof p.protocolVersion !== "string") return false;
  const info = p.clientInfo;
  if (!isObject(info) || typeof info.name !== "string" || typeof info.version !== "string") return false;
  if (!onlyKeys(info, ["name", "version", "title", "websiteUrl", "description"])) return false;
  if (!Object.values(info).every((v) => typeof v === "string")) return false;
  return plainCapabilities(p.capabilities);
}

type Check = (v: unknown) => boolean;
const absentOr = (v: unknown, check: Check) => v === undefined || check(v);
/** An object whose members `keys`, where present, are objects. */
const objectWith =
  (keys: string[]): Check =>
  (v) =>
    isObject(v) && keys.every((k) => absentOr(v[k], isObject));
const allObjects: Check = (v) => isObject(v) && Object.values(v).every(isObject);

/** The known client capabilities, each as the SDK's ClientCapabilitiesSchema asks (it drops unknown ones). */
const CAPABILITY: Record<string, Check> = {
  roots: (v) => isObject(v) && absentOr(v.listChanged, (x) => typeof x === "boolean"),
  sampling: objectWith(["context", "tools"]),
  elicitation: (v) =>
    objectWith(["form", "url"])(v) &&
    absentOr((v as Message).form, (f) => absentOr((f as Message).applyDefaults, (x) => typeof x === "boolean")),
  tasks: (v) =>
    objectWith(["list", "cancel", "requests"])(v) &&
    absentOr(
      (v as Message).requests,
      (r) =>
        absentOr((r as Message).sampling, objectWith(["createMessage"])) &&
        absentOr((r as Message).elicitation, objectWith(["create"])),
    ),
  experimental: allObjects,
  extensions: allObjects,
};

function plainCapabilities(c: unknown): boolean {
  return isObject(c) && Object.entries(c).every(([k, v]) => !Object.hasOwn(CAPABILITY, k) || CAPABILITY[k](v));
}

/** A plain tools/list: `{jsonrpc, id, method, params?: {cursor?}}`, nothing else. */
export function plainListTools(m: Message): boolean {
  if (m.jsonrpc !== "2.0" || m.method !== "tools/list" || !isId(m.id) || !onlyKeys(m, REQUEST_KEYS)) return false;
  const p = m.params;
  if (p === undefined) return true;
  return isObject(p) && onlyKeys(p, ["cursor"]) && (p.cursor === undefined || typeof p.cursor === "string");
}
