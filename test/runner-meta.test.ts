// scripts/test.mjs runs each test file as a bundle (esbuild) without module hooks: the modules in it
// must still see their own source file in import.meta, where fixtures, workers and helpers are found.
// It also runs them without NODE_EXTRA_CA_CERTS, which costs Node 20 ~36 ms at every process start.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { testEnv } from "../scripts/test-env.mjs";

test("a test file's import.meta.url and dirname name its own .ts source, bundled or not", () => {
  const file = fileURLToPath(import.meta.url);
  assert.equal(path.basename(file), "runner-meta.test.ts");
  assert.match(readFileSync(file, "utf8"), /a test file's import\.meta\.url and dirname name its own \.ts source/);
  assert.equal(import.meta.dirname, path.dirname(file));
});

test("the runner's environment: its own state folder, no LATCH_STATE_DIR, no NODE_EXTRA_CA_CERTS", () => {
  const base = {
    PATH: "/usr/bin",
    LATCH_STATE_DIR: "/home/someone/.local/state/latch",
    NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/ca-certificates.crt",
  };
  const env = testEnv(base, { run: "/tmp/run", times: "/tmp/run/times.jsonl", stress: false });
  assert.deepEqual(env, {
    PATH: "/usr/bin",
    XDG_STATE_HOME: "/tmp/run",
    LATCH_TEST_STATE_HOME: "/tmp/run",
    LATCH_TEST_TIMES: "/tmp/run/times.jsonl",
  });
  assert.equal(testEnv(base, { run: "/tmp/run", times: "/tmp/t", stress: true }).LATCH_STRESS, "1");
  assert.equal(
    base.NODE_EXTRA_CA_CERTS,
    "/etc/ssl/certs/ca-certificates.crt",
    "the caller's environment is left as it was",
  );
});
