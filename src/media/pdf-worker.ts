// Runs in a worker thread (pdf.ts): pdfjs-dist's legacy build for Node turns a PDF's pages into text.
// A PDF bomb can only burn this thread: the caller terminates it past its time, and its heap is capped.
import { parentPort, workerData } from "node:worker_threads";

interface Job {
  data: Uint8Array;
  first: number;
  last: number;
  maxChars: number;
}

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

async function run(job: Job): Promise<void> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const doc = await pdfjs.getDocument({
    data: job.data,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  }).promise;
  const pages: { page: number; text: string }[] = [];
  let chars = 0;
  let cut = false;
  const last = Math.min(job.last, doc.numPages);
  for (let n = job.first; n <= last; n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    let text = "";
    for (const item of content.items as TextItem[]) {
      text += item.str ?? "";
      if (item.hasEOL) text += "\n";
    }
    page.cleanup();
    if (chars + text.length > job.maxChars) {
      pages.push({ page: n, text: text.slice(0, Math.max(0, job.maxChars - chars)) });
      cut = true;
      break;
    }
    chars += text.length;
    pages.push({ page: n, text });
  }
  await doc.destroy();
  parentPort!.postMessage({ ok: true, numPages: doc.numPages, pages, cut });
}

run(workerData as Job).catch((err: unknown) => {
  parentPort!.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
});
