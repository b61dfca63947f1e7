// The test files' TypeScript loader where they are not bundled (scripts/test.mjs bundles them by
// default; LATCH_TEST_LOADER=hooks, or a bundle that fails, runs them with `--import ./scripts/ts-loader.mjs`),
// in place of tsx's there. Each test file is a process that loads some hundred modules of src/ through module hooks,
// which on Node 20 run on a thread of their own: tsx's resolver probes many candidates for each import
// and cost each file ~0.6 s of CPU more than these hooks (about 100 s of the suite's CPU over its files).
// These do only what the repository needs: `./x.js` written in a .ts file means `./x.ts` when that
// exists, and a .ts file is stripped of its types by esbuild (tsx's own compiler) once per content,
// cached on disk. Anything else goes to Node's own resolver and loader; tsx stays for everything else
// (benches, workers under tests, `node --import tsx` in tests).
import { register } from "node:module";

process.setSourceMapsEnabled(true); // a failing assertion's stack names the .ts lines, as under tsx
register("./ts-loader-hooks.mjs", import.meta.url);
