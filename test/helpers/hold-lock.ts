// Holds the mutation lock of a path until stdin closes (or it is killed): another process, for the
// lock tests. Prints "held" once it has the lock.
import { withPathLock } from "../../src/fs/lock.js";

const [locksDir, target] = process.argv.slice(2);
await withPathLock(locksDir, target, async () => {
  process.stdout.write("held\n");
  await new Promise((resolve) => process.stdin.on("end", resolve).resume());
});
