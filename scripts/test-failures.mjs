// A second reporter beside TAP (scripts/test.mjs): each failed test as one short entry, which the
// runner prints again at the very end. A whole run's TAP is ~20,000 lines, and a log cut to its head
// and tail (as CI shows one) would otherwise hide which test failed and why.
/** Lines of the error kept per failure: the message and the top of the assertion's diff. */
const LINES = 12;

export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== "test:fail") continue;
    const { name, file, line, details } = event.data;
    const err = details?.error;
    // A suite fails when a test in it does, and a file when its suite does: the test says it.
    if (details?.type === "suite" || err?.failureType === "subtestsFailed") continue;
    const cause = err?.cause ?? err;
    const text = String(cause?.stack ?? cause?.message ?? cause ?? "failed")
      .split("\n")
      .filter((l) => !/^\s+at .*\(?node:/.test(l)) // the runner's own frames
      .slice(0, LINES)
      .map((l) => `    ${l}`)
      .join("\n");
    yield `${file ?? "?"}${line ? `:${line}` : ""}: ${name}\n${text}\n`;
  }
}
