// The disclosure scan's thread: answers batches of strings with their findings (scan.ts). A rule
// that runs away stalls only this thread; the gate (scanner.ts) terminates it at its deadline.
import { parentPort } from "node:worker_threads";
import type { Needle } from "./known.js";
import { scanText, type Finding } from "./scan.js";
import { FORMAT_RULES } from "./rules.js";

export interface ScanBatch {
  id: number;
  /** Sent with a scanner's first batch on this thread (and after it changes): the known values. */
  needles?: { key: number; list: Needle[] };
  needlesKey: number;
  texts: string[];
}

export type ScanAnswer = { id: number; ok: true; findings: Finding[][] } | { id: number; ok: false; message: string };

const needleSets = new Map<number, Needle[]>();

parentPort?.on("message", (batch: ScanBatch) => void scanBatch(batch));

async function scanBatch(batch: ScanBatch): Promise<void> {
  if (batch.needles) {
    needleSets.clear(); // one set in use at a time: the scanner sends a new one when it changes
    needleSets.set(batch.needles.key, batch.needles.list);
  }
  let answer: ScanAnswer;
  try {
    const needles = needleSets.get(batch.needlesKey) ?? [];
    const findings: Finding[][] = [];
    for (const t of batch.texts) findings.push(await scanText(t, { needles, rules: FORMAT_RULES }));
    answer = { id: batch.id, ok: true, findings };
  } catch (err) {
    answer = { id: batch.id, ok: false, message: (err as Error).message };
  }
  parentPort!.postMessage(answer);
}
