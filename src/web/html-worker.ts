// The HTML conversion thread: turndown on a multi-megabyte page takes seconds, which on the main
// thread would stall every session of the server. The client is html-pool.ts.
import { parentPort } from "node:worker_threads";
import type { Format } from "./convert.js";
import { htmlTo } from "./markdown.js";

export interface HtmlJob {
  html: string;
  format: Exclude<Format, "raw">;
}

parentPort?.on("message", (job: HtmlJob) => {
  try {
    parentPort!.postMessage({ text: htmlTo(job.html, job.format) });
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message });
  }
});
