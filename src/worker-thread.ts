// A worker thread for a module beside the caller (grep's regex worker, url_fetch's HTML conversion,
// read_media's PDF worker). The caller passes its own import.meta.url: tsc's dist/ keeps NAME.js
// beside the caller's file, and the bundle (scripts/bundle.mjs) beside main.js, where the caller is.
import { Worker, type WorkerOptions } from "node:worker_threads";

export function startWorker(here: string, name: string, opts: WorkerOptions = {}): Worker {
  if (here.endsWith(".ts")) {
    // Under tsx (tests, development) a worker does not inherit tsx's loader: register it, then load.
    const api = import.meta.resolve("tsx/esm/api");
    const file = new URL(`./${name}.ts`, here).href;
    const code = `import(${JSON.stringify(api)}).then((t) => { t.register(); return import(${JSON.stringify(file)}); })`;
    return new Worker(code, { ...opts, eval: true });
  }
  return new Worker(new URL(`./${name}.js`, here), opts);
}
