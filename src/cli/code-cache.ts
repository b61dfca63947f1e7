// The program, loaded with a V8 code cache where the build made one for this very Node. Compiling
// the program's ~1.2 MB afresh is a fifth of a start's CPU, and Node 20 keeps no compile cache (22's
// module.enableCompileCache() caches only what compiles before the code runs: a few ms). So the build
// (scripts/bundle.mjs) also writes the program as one CommonJS file, program.cjs, runs one `latch mcp`
// to its first tools/list and a read, and keeps V8's code for every function that run compiled, in
// program.cjs.<node version>-<arch>.cache beside it. A start that finds the file for its Node runs the
// script through vm.Script with that cache; V8 checks it against the source and its flags and, if they
// differ, compiles from the source as usual (`cachedDataRejected`). Without the file (another Node,
// tsc's dist, a copy without it) the ES module chunks load, with Node's compile cache where there is one.
// The cache is part of the build, beside the code it stands for: nothing is written at run time.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import module, { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

type Program = typeof import("./program.js");

/** Set (to 1) by the build for its training run, which writes the cache for its Node when it exits. */
const TRAIN_VAR = "LATCH_BUILD_CODE_CACHE";

export async function loadProgram(): Promise<Program> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const bundle = path.join(here, "program.cjs");
  // Named for this Node: V8 rejects a cache from another version or other flags anyway.
  const cacheFile = path.join(here, `program.cjs.${process.version}-${process.arch}.cache`);
  const train = process.env[TRAIN_VAR] === "1" ? cacheFile : undefined;
  if (!existsSync(bundle) || (train === undefined && !existsSync(cacheFile))) {
    (module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
    return import("./program.js");
  }
  // latin1: the build keeps program.cjs ASCII (scripts/bundle.mjs), so each byte is its character and
  // the source is a one-byte string, made without decoding UTF-8 (a millisecond or two of 3 MB).
  const script = new vm.Script(module.wrap(readFileSync(bundle, "latin1")), {
    filename: bundle,
    // The bundle has no import(): scripts/bundle.mjs turns each into require() for this copy.
    cachedData: train === undefined ? readFileSync(cacheFile) : undefined,
  });
  if (train !== undefined) {
    // At exit V8 holds the code of everything the run compiled: the cache is that, not only the top level.
    delete process.env[TRAIN_VAR]; // not inherited by what the run starts
    process.on("exit", () => writeFileSync(train, script.createCachedData()));
  }
  const init = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dirname: string,
  ) => void;
  const mod = { exports: {} };
  init(mod.exports, createRequire(bundle), mod, bundle, here);
  return mod.exports as Program;
}
