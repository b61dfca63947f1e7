// The names of latch's temp files, and the record of those this process holds now: a shutdown or the
// next start removes what a killed process left at such a name (src/host/recover.ts), and any later
// write into the folder sweeps those of dead writers (removeDeadTemps in atomic-write.ts).
import { PLACE } from "./owner.js";
import { uniqueHex } from "./unique.js";

// `.NAME.latch-PID-TAGRAND.tmp`: TAG (4 hex) is the writer's place (machine, boot, pid namespace), so
// only temp files whose pid can be checked from here are ever judged dead.
export const TEMP_RE = /^\.(.+)\.latch-(\d+)-([0-9a-f]{4})[0-9a-f]{8}\.tmp$/s; // s: a name may hold a newline
export const TAG = PLACE.slice(0, 4);

/** A new temp name for `name` (a file's name, or a word for what the temp file is). */
export function tempName(name: string): string {
  return `.${name}.latch-${process.pid}-${TAG}${uniqueHex()}.tmp`;
}

/**
 * The temp files this process is writing now, and who is told of each before it is created (the run
 * record, src/host/recover.ts), so a shutdown or the next start can remove what a killed write left.
 */
export const tempWatch: { live: Set<string>; created?: (tmp: string) => void } = { live: new Set() };
