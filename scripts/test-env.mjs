// The environment scripts/test.mjs gives the test files: apart from it so a test can hold it
// (test/runner-meta.test.ts) without starting a run.

/**
 * `base` with the run's own variables. Every latch the tests start without --state-dir keeps its state
 * in `run`, never in the user's own ~/.local/state/latch (a newer or older build there would meet a
 * schema it cannot read). NODE_EXTRA_CA_CERTS goes: Node 20 parses its file at every start, before any
 * code runs (~36 ms a process where it names the system's CA bundle, as in this workplace; Node 22 and
 * 24 read it at the first TLS connection), and the files start ~1,000 Node processes and reach no
 * network beyond loopback: ~34 s of CPU, ~17 s of the files' wall time on 2 cores (bench/RESULTS.md,
 * "suite-time").
 */
export function testEnv(base, { run, times, stress }) {
  const env = {
    ...base,
    XDG_STATE_HOME: run,
    LATCH_TEST_STATE_HOME: run,
    LATCH_TEST_TIMES: times,
    // `--stress` runs the stress loops at their full counts (each test reads LATCH_STRESS=1); `npm test`
    // runs them small, enough to catch the bugs they were written for.
    ...(stress ? { LATCH_STRESS: "1" } : {}),
  };
  delete env.LATCH_STATE_DIR;
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}
