// Two syncs of a policy log on the thread pool in a process of its own, each fdatasync held by the
// fault shim (`fdatasync:policy-*:0:GATE`) until this script opens its gate (DIR/gate.N), and a
// settled() asked between them. Prints JSON: whether settled() and the first sync answered while the
// second was still held.
import { existsSync, writeFileSync } from "node:fs";
import { PolicyLog } from "../../src/audit/log.js";

const [file, dir] = process.argv.slice(2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const held = async (n: number) => {
  while (!existsSync(`${dir}/mark.${n}`)) await sleep(5);
};
const line = (n: number) => ({ type: "run_finished" as const, effects: n, at: new Date().toISOString() });

const log = PolicyLog.create(file);
log.append(line(1), "write");
const first = log.syncing();
let firstAnswered = false;
void first.then(() => (firstAnswered = true));
await held(1);
let settled = false;
const waiting = log.settled().then(() => (settled = true));
log.append(line(2), "write");
const second = log.syncing();
await held(2);
writeFileSync(`${dir}/gate.1`, "");
await Promise.race([waiting, sleep(5000)]);
const out = { settledWhileSecondHeld: settled, firstWhileSecondHeld: firstAnswered };
writeFileSync(`${dir}/gate.2`, "");
await Promise.all([first, second]);
log.finish(2);
process.stdout.write(JSON.stringify({ ...out, syncs: log.syncs }) + "\n");
