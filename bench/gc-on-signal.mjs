// Preloaded into the latch server by bench/http-sessions.ts (with --expose-gc): on SIGUSR2, a full
// collection, then the heap in use and the RSS on stderr, so the bench reads what the server still
// holds rather than the heap pages V8 has not returned yet.
process.on("SIGUSR2", () => {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  process.stderr.write(`latch-bench-heap ${m.heapUsed} ${m.rss}\n`);
});
