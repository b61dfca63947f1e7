// One writeAtomic of `text` into ROOT/REL, in a process of its own (for the fault shim): its
// afterRename hook prints "after-rename: " and what the file holds then (JSON), and the write's result
// is printed as JSON once it resolves.
import { readFileSync } from "node:fs";
import { writeAtomic } from "../../src/fs/atomic-write.js";

const [root, rel, text] = process.argv.slice(2);
const abs = `${root}/${rel}`;
const written = await writeAtomic({ abs, rel }, text, undefined, () =>
  process.stdout.write(`after-rename: ${JSON.stringify(readFileSync(abs, "utf8"))}\n`),
);
process.stdout.write(JSON.stringify(written) + "\n");
