// An `[openapi.X]` service: its spec file read, validated and dereferenced by @readme/openapi-parser
// (OpenAPI 3.0, 3.1 and Swagger 2; a `$ref` to another local file is followed, one to a URL is not:
// latch fetches nothing but the calls), each operation the include/exclude globs keep made a tool of
// its operationId: one argument per parameter, and `body` for the request body, so the registry
// checks a call against the operation's own schemas before anything is sent. The definition pinned
// includes the method and the path: an operation moved to DELETE is a changed tool.
import path from "node:path";
import { readFile } from "node:fs/promises";
import { dereference, validate, compileErrors } from "@readme/openapi-parser";
import picomatch from "picomatch";
import type { OpenApiConfig } from "../config/servers.js";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** Where one argument goes in the request. */
interface ArgPlace {
  /** The argument's name in the tool's input. */
  arg: string;
  in: "path" | "query" | "header" | "body";
  /** The parameter's name in the request (path template, query key, header). */
  name: string;
}

export interface Operation {
  /** The tool's upstream name: the operationId, or `<method> <path>` where the spec gives none. */
  id: string;
  method: string;
  path: string;
  description: string;
  inputSchema: Record<string, unknown>;
  places: ArgPlace[];
  /** The request body's media type, when the operation takes one. */
  bodyType?: string;
}

/** Headers a parameter may not set: the connection's own, and the ones latch's auth sends. */
const NOT_SETTABLE = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "cookie",
  "authorization",
]);

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** Every operation of the spec the globs keep, in the spec's order; a spec that is not valid throws why. */
export async function readOperations(c: OpenApiConfig): Promise<Operation[]> {
  // No URL is ever fetched for a `$ref`: the parser's own option for that (`resolve.http`) takes
  // download settings, not an off switch, so latch reads every file the refs reach first and refuses a
  // URL before the parser sees the spec.
  await refuseUrlRefs(c.spec);
  const options = {};
  const checked = await validate(c.spec, options);
  if (!checked.valid) throw new Error(`the spec ${c.spec} is not valid: ${compileErrors(checked)}`);
  // A circular `$ref` stays a `$ref` (its schema then checks less): definitions stay plain JSON to pin.
  const doc = obj(await dereference(c.spec, { ...options, dereference: { circular: "ignore" } }));
  const swagger2 = typeof doc.swagger === "string";
  const keep = (id: string) =>
    (c.include.length === 0 || c.include.some((g) => picomatch.isMatch(id, g))) &&
    !c.exclude.some((g) => picomatch.isMatch(id, g));
  const out: Operation[] = [];
  for (const [p, rawItem] of Object.entries(obj(doc.paths))) {
    const item = obj(rawItem);
    for (const method of METHODS) {
      if (!item[method]) continue;
      const op = obj(item[method]);
      const id = typeof op.operationId === "string" ? op.operationId : `${method} ${p}`;
      if (!keep(id)) continue;
      const params = [...arr(item.parameters), ...arr(op.parameters)];
      out.push(operationOf(id, method, p, op, params, swagger2));
    }
  }
  return out;
}

/** At most this many files reached by `$ref`s are read (a spec split over more is refused). */
const MAX_SPEC_FILES = 200;

/** Throws naming the first `$ref` to a URL in the spec or any local file its refs reach. */
async function refuseUrlRefs(spec: string): Promise<void> {
  const seen = new Set<string>();
  const queue = [path.resolve(spec)];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    if (seen.size > MAX_SPEC_FILES)
      throw new Error(`the spec's $refs reach more than ${MAX_SPEC_FILES} files: bundle it into fewer`);
    const { parse } = await import("./yaml.js"); // JSON is YAML too
    const doc: unknown = parse(await readFile(file, "utf8"));
    for (const ref of refsOf(doc)) {
      if (ref.startsWith("#")) continue;
      const target = ref.split("#")[0];
      if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target))
        throw new Error(
          `${file} has a $ref to ${JSON.stringify(ref)}: latch fetches no $ref by URL; save that document beside the spec and refer to it by a relative path`,
        );
      queue.push(path.resolve(path.dirname(file), decodeURIComponent(target)));
    }
  }
}

function* refsOf(v: unknown): Generator<string> {
  if (Array.isArray(v)) for (const x of v) yield* refsOf(x);
  else if (v && typeof v === "object")
    for (const [k, x] of Object.entries(v)) {
      if (k === "$ref" && typeof x === "string") yield x;
      else yield* refsOf(x);
    }
}

function arr(v: unknown): Json[] {
  return Array.isArray(v) ? v.map(obj) : [];
}

function operationOf(id: string, method: string, p: string, op: Json, rawParams: Json[], swagger2: boolean): Operation {
  // An operation's parameter replaces the path item's of the same name and place.
  const byKey = new Map<string, Json>();
  for (const q of rawParams) byKey.set(`${String(q.in)}:${String(q.name)}`, q);
  const properties: Json = {};
  const required: string[] = [];
  const places: ArgPlace[] = [];
  const argName = (name: string, where: string) => (name in properties ? `${where}_${name}` : name);
  let bodyType: string | undefined;
  for (const q of byKey.values()) {
    const where = String(q.in);
    const name = String(q.name);
    if (where === "body" && swagger2) {
      bodyType = "application/json";
      add("body", "body", "body", obj(q.schema), q.required === true);
      continue;
    }
    if (where !== "path" && where !== "query" && where !== "header") continue; // cookie, formData: not sent
    if (where === "header" && NOT_SETTABLE.has(name.toLowerCase())) continue;
    add(
      argName(name, where),
      where,
      name,
      swagger2 ? swagger2Schema(q) : obj(q.schema),
      where === "path" || q.required === true,
      q.description,
    );
  }
  const body = obj(op.requestBody);
  const content = obj(body.content);
  const type =
    ["application/json", "application/x-www-form-urlencoded", "text/plain"].find((t) => t in content) ??
    Object.keys(content).find((t) => t.endsWith("+json"));
  if (type) {
    bodyType = type;
    add(
      argName("body", "body"),
      "body",
      "body",
      obj(obj(content[type]).schema),
      body.required === true,
      body.description,
    );
  }
  const summary = [op.summary, op.description].filter((s) => typeof s === "string" && s !== "").join("\n\n");
  return {
    id,
    method: method.toUpperCase(),
    path: p,
    description: `${method.toUpperCase()} ${p}${summary ? `\n\n${summary}` : ""}`,
    inputSchema: { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false },
    places,
    ...(bodyType ? { bodyType } : {}),
  };

  function add(arg: string, where: string, name: string, schema: Json, req: boolean, description?: unknown) {
    properties[arg] =
      typeof description === "string" && !("description" in schema) ? { ...schema, description } : schema;
    if (req) required.push(arg);
    places.push({ arg, in: where as ArgPlace["in"], name });
  }
}

/** Keys of a Swagger 2 parameter that are not schema keywords. */
const NOT_SCHEMA = new Set(["name", "in", "required", "description", "allowEmptyValue", "collectionFormat"]);

/** A Swagger 2 parameter carries its schema keywords on itself. */
function swagger2Schema(q: Json): Json {
  return Object.fromEntries(Object.entries(q).filter(([k]) => !NOT_SCHEMA.has(k)));
}
