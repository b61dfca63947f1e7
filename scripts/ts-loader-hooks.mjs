// The hooks of scripts/ts-loader.mjs, on Node's module hooks thread.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const ESBUILD = require("esbuild/package.json").version;
const OPTIONS = { loader: "ts", format: "esm", target: "es2022", sourcemap: "inline" };
// Outputs by a hash of the source, the compiler's version and its options: an edit or an upgrade
// misses the cache. Shared by the files running side by side, so written whole (a rename) or not at all.
const CACHE = path.join(os.tmpdir(), `latch-ts-loader-${process.getuid?.() ?? "user"}`);
mkdirSync(CACHE, { recursive: true, mode: 0o700 });
// A folder another user made (or a link) in a shared /tmp would hand them the code the tests run.
const own = lstatSync(CACHE);
if (!own.isDirectory() || (process.getuid && own.uid !== process.getuid()) || (own.mode & 0o022) !== 0)
  throw new Error(`scripts/ts-loader: ${CACHE} is not a folder of this user's that only it may write; remove it`);
let esbuild; // loaded on the first miss only: it starts a compiler process

export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  if (parent?.startsWith("file:") && parent.endsWith(".ts") && /^\.{1,2}\/.*\.js$/.test(specifier)) {
    const ts = new URL(`${specifier.slice(0, -3)}.ts`, parent);
    if (existsSync(fileURLToPath(ts))) return { url: ts.href, format: "module", shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const file = fileURLToPath(url);
  const source = readFileSync(file, "utf8");
  const key = createHash("sha256")
    .update(`${ESBUILD}\0${JSON.stringify(OPTIONS)}\0${file}\0${source}`)
    .digest("hex");
  const cached = path.join(CACHE, `${key}.js`);
  let code;
  try {
    code = readFileSync(cached, "utf8");
  } catch (err) {
    if (err.code !== "ENOENT") throw err;
    esbuild ??= require("esbuild");
    code = esbuild.transformSync(source, { ...OPTIONS, sourcefile: file }).code;
    const tmp = `${cached}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, cached);
  }
  return { format: "module", source: code, shortCircuit: true };
}
