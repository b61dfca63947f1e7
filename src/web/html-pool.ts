// HTML → Markdown or text on a worker thread, bounded in time and stopped by cancellation (the worker
// is terminated). One thread per conversion: fetches are rare next to their network time, and a
// terminated thread leaves nothing behind.
import { Worker } from "node:worker_threads";
import { ToolError } from "../errors.js";
import type { Format } from "./convert.js";
import type { HtmlJob } from "./html-worker.js";

function newWorker(): Worker {
  const here = import.meta.url;
  if (here.endsWith(".ts")) {
    // Under tsx (tests, development) a worker does not inherit tsx's loader: register it, then load.
    const api = import.meta.resolve("tsx/esm/api");
    const file = new URL("./html-worker.ts", here).href;
    const code = `import(${JSON.stringify(api)}).then((t) => { t.register(); return import(${JSON.stringify(file)}); })`;
    return new Worker(code, { eval: true });
  }
  // tsc's dist/ has html-worker.js beside this file; the bundle (scripts/bundle.mjs) beside main.js.
  return new Worker(new URL("./html-worker.js", here));
}

export function convertHtml(
  html: string,
  format: Exclude<Format, "raw">,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const w = newWorker();
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
