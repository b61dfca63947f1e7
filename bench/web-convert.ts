// url_fetch's HTML → Markdown conversion (turndown): the time it takes and the longest stall of the
// main thread, for turndown run inline (the peer: how it ran before) against latch's worker thread,
// in one run. A stall is the longest gap between ticks of a 5 ms timer while the conversion runs:
// over MCP, every session of the server waits that long.
import { htmlTo } from "../src/web/markdown.js";
import { convertHtml } from "../src/web/html-pool.js";
import { measuredLine, median, publish, watchLoad, noiseNote } from "./report.js";

const RUNS = 3;
const para =
  "<div class='x'><h2>Title</h2><p>Some <b>bold</b> and <a href='/a'>a link</a> text, fairly ordinary.</p><ul><li>one</li><li>two</li></ul></div>\n";

async function measure(size: number, inline: boolean): Promise<{ ms: number; stall: number }> {
  const html = `<html><body>${para.repeat(Math.round(size / para.length))}</body></html>`;
  let last = Date.now();
  let stall = 0;
  const tick = setInterval(() => {
    const now = Date.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  const t = Date.now();
  if (inline) htmlTo(html, "markdown");
  else await convertHtml(html, "markdown", 120_000, new AbortController().signal);
  const ms = Date.now() - t;
  await new Promise((r) => setTimeout(r, 10)); // let the tick that was held back record its gap
  clearInterval(tick);
  return { ms, stall };
}

const load = watchLoad();
const rows: string[] = [];
try {
  for (const mib of [0.25, 1, 4]) {
    for (const inline of [true, false]) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await measure(mib * 1024 * 1024, inline));
      rows.push(
        `| ${mib} | ${inline ? "turndown inline (peer)" : "latch worker thread"} | ${median(runs.map((r) => r.ms)).toFixed(0)} | ${median(runs.map((r) => r.stall)).toFixed(0)} |`,
      );
    }
  }
} finally {
  load.stop();
}
publish(
  "web-convert",
  "url_fetch HTML conversion: main-thread stall, inline turndown against the worker thread",
  [
    measuredLine("node --import tsx bench/web-convert.ts", load, ` (median of ${RUNS})`),
    noiseNote(load),
    "",
    "| HTML MiB | conversion | total ms | longest main-thread stall ms |",
    "|---:|---|---:|---:|",
    ...rows,
  ].join("\n"),
);
