// Types of scripts/test-env.mjs, for the test that holds it (test/runner-meta.test.ts).
export function testEnv(
  base: Record<string, string | undefined>,
  opts: { run: string; times: string; stress: boolean },
): Record<string, string | undefined>;
