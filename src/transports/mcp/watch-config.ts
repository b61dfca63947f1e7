// `latch mcp` follows its config file: when agents.toml changes on disk (an edit, or an editor's
// rename over it), the host loads it again, and each MCP session tells its client the tool list
// changed (server.ts). An invalid edit changes nothing: the previous config stays, and stderr says why.
import { watch, type FSWatcher } from "node:fs";
import path from "node:path";
import type { Host } from "../../host/create-host.js";
import { log } from "../log.js";

/** Editors write in bursts (truncate, write, rename): one reload after the last event. */
const SETTLE_MS = 150;

export function watchConfig(host: Host): () => void {
  const file = host.configFile;
  let timer: NodeJS.Timeout | undefined;
  const reload = () =>
    host.reload().then(
      (r) => {
        if (r.error) log("warn", `${file} changed but was not loaded: ${r.error} The previous config stays in force.`);
        else if (r.changed) log("info", `${file} changed: loaded again (envelope ${host.envelope.name})`);
      },
      (err: Error) => log("error", `${file} changed but could not be loaded again: ${err.message}`),
    );
  let watcher: FSWatcher;
  try {
    // The folder, not the file: an editor that renames a new file over it would end a file watch.
    watcher = watch(path.dirname(file), { persistent: false }, (_event, name) => {
      if (name !== null && name !== path.basename(file)) return;
      clearTimeout(timer);
      timer = setTimeout(() => void reload(), SETTLE_MS);
    });
  } catch (err) {
    log("debug", `not following ${file}: ${(err as Error).message}`);
    return () => undefined;
  }
  watcher.on("error", (err) => log("warn", `stopped following ${file}: ${err.message}`));
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}
