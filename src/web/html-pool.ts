// HTML → Markdown or text on a worker thread, bounded in time and stopped by cancellation (the worker
// is terminated). One thread per conversion: fetches are rare next to their network time, and a
// terminated thread leaves nothing behind.
import { startWorker } from "../worker-thread.js";
import { ToolError } from "../errors.js";
import type { Format } from "./convert.js";
import type { HtmlJob } from "./html-worker.js";

export function convertHtml(
  html: string,
  format: Exclude<Format, "raw">,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const w = startWorker(import.meta.url, "html-worker");
    let done = false;
    const finish = (err: Error | undefined, text?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      void w.terminate();
      if (err) reject(err);
      else resolve(text!);
    };
    const timer = setTimeout(
      () =>
        finish(
          new ToolError("ETIMEDOUT", `Converting the page took longer than ${timeoutMs} ms; ask for format "raw".`),
        ),
      timeoutMs,
    );
    const onAbort = () => finish(new ToolError("ECANCELED", "The fetch was cancelled."));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    w.once("message", (m: { text?: string; error?: string }) =>
      m.error !== undefined
        ? finish(new ToolError("ECONVERT", `The page could not be converted (${m.error}); ask for format "raw".`))
        : finish(undefined, m.text ?? ""),
    );
    w.once("error", (err) => finish(new ToolError("ECONVERT", `The page could not be converted (${err.message}).`)));
    w.once("exit", () => finish(new ToolError("ECONVERT", "The conversion thread ended without an answer.")));
    w.postMessage({ html, format } satisfies HtmlJob);
  });
}
