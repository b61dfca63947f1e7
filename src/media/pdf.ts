// A PDF's text, page by page, from a worker thread with a capped heap and a deadline: a PDF bomb
// (a huge page tree, deep object nesting, a stream that inflates without end) costs at most
// PDF_MS and PDF_HEAP_MB, then the worker is terminated and the call says why.
import { Worker } from "node:worker_threads";
import { ToolError } from "../errors.js";

const PDF_MS = 15_000;
const PDF_HEAP_MB = 256;

export interface PdfText {
  numPages: number;
  pages: { page: number; text: string }[];
  cut: boolean;
}

export interface PdfJob {
  data: Uint8Array;
  first: number;
  last: number;
  maxChars: number;
}

function newWorker(job: PdfJob): Worker {
  const here = import.meta.url;
  const opts = { workerData: job, resourceLimits: { maxOldGenerationSizeMb: PDF_HEAP_MB } };
  if (here.endsWith(".ts")) {
    // Under tsx (tests, development) a worker does not inherit tsx's loader: register it, then load.
    const api = import.meta.resolve("tsx/esm/api");
    const file = new URL("./pdf-worker.ts", here).href;
    const code = `import(${JSON.stringify(api)}).then((t) => { t.register(); return import(${JSON.stringify(file)}); })`;
    return new Worker(code, { eval: true, ...opts });
  }
  // tsc's dist/ has pdf-worker.js beside this file; the bundle (scripts/bundle.mjs) beside main.js.
  return new Worker(new URL("./pdf-worker.js", here), opts);
}

export function pdfText(job: PdfJob, signal: AbortSignal, ms = PDF_MS): Promise<PdfText> {
  return new Promise((resolve, reject) => {
    const w = newWorker(job);
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      void w.terminate();
      fn();
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new ToolError(
              "ETIMEDOUT",
              `The PDF took over ${ms / 1000} s to read and was given up (a very large or malformed PDF). Ask for fewer pages, or read it with the shell.`,
            ),
          ),
        ),
      ms,
    );
    const onAbort = () => finish(() => reject(new ToolError("ECANCELED", "The PDF read was cancelled.")));
    signal.addEventListener("abort", onAbort, { once: true });
    w.on("message", (m: ({ ok: true } & PdfText) | { ok: false; message: string }) =>
      finish(() =>
        m.ok
          ? resolve({ numPages: m.numPages, pages: m.pages, cut: m.cut })
          : reject(new ToolError("EPDF", `The PDF could not be read: ${m.message}.`)),
      ),
    );
    w.on("error", (err) =>
      finish(() =>
        reject(
          new ToolError(
            (err as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY" ? "ETOOLARGE" : "EPDF",
            `The PDF could not be read: ${err.message}.`,
          ),
        ),
      ),
    );
    w.on("exit", () => finish(() => reject(new ToolError("EPDF", "The PDF reader stopped without an answer."))));
  });
}
