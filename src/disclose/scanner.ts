// The disclosure gate's scanner (issue 29): every string of a value (a result, its display data, an
// error message, a refusal, an approval's diff), keys included, is scanned on a worker thread with a
// deadline; the findings come back as ranges, and the value is rebuilt with each one replaced. A
// scanner that fails or runs past DISCLOSE_SCAN_MS throws DisclosureScanError: the caller withholds
// (fails closed). Secrets never cross back: the worker returns ranges, the copy is made here.
import type { Worker } from "node:worker_threads";
import { createHmac } from "node:crypto";
import { startWorker } from "../worker-thread.js";
import type { Needle } from "./known.js";
import { MIN_SCANNED, redactText, scanText, type Detectors, type Finding } from "./scan.js";
import { FORMAT_RULES } from "./rules.js";
import type { ScanAnswer, ScanBatch } from "./scan-worker.js";

/**
 * Values smaller than this (all their strings together, in UTF-16 units) are scanned on this thread:
 * a thread handoff costs more than their scan, and the table's patterns are literal-led with bounded
 * repeats, so the work on 16 Ki characters is bounded and small (a few ms at worst). Larger values
 * go to the worker, with its deadline.
 */
const INLINE_MAX = 16 * 1024;

/**
 * Strings up to this length that scanned clean are remembered (up to CLEAN_ENTRIES of them, per
 * scanner, forgotten whenever the needles change): a call's reason, its paths, field names and
 * hashes come back call after call, and a scan's answer depends only on the string and the needles.
 */
const CLEAN_MAX = 512;
const CLEAN_ENTRIES = 4096;

/** How long one value's scan may take before the result is withheld (ms). */
const DISCLOSE_SCAN_MS = 5000;

export class DisclosureScanError extends Error {}

/** One finding as the log and the policy programs see it: where, never what. */
interface FindingRange {
  /** The JSON path of the string (`result.content`, `display.diff`, …). */
  at: string;
  start: number;
  end: number;
}

export interface RuleFindings {
  rule: string;
  count: number;
  ranges: FindingRange[];
  /** HMAC-SHA256 (the state dir's key) of each distinct secret, first 16 hex: the same secret twice reads the same, yet cannot be guessed back. */
  fingerprints: string[];
}

export interface ScanReport {
  findings: RuleFindings[];
  /** The value with each finding replaced by `[REDACTED:<rule>]`; the same object when nothing was found. */
  redacted: unknown;
}

let nextKey = 1;

export class DisclosureScanner {
  private worker: Worker | undefined;
  private sentKey = false;
  private key = nextKey++;
  /** Needles that change between calls (the quarantined files' contents), and their identity. */
  private extra: readonly Needle[] = [];
  private extraId = "";
  private inline: Detectors | undefined;
  /** Short strings that scanned clean with the current needles (CLEAN_MAX). */
  private readonly clean = new Set<string>();
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(f: Finding[][]): void; reject(e: Error): void }>();

  constructor(
    private readonly needles: readonly Needle[],
    private readonly hmacKey: Buffer,
    private readonly deadlineMs = DISCLOSE_SCAN_MS,
  ) {}

  /** Scan every string of `value` (keys too) and give back the report with its redacted copy. */
  async scan(value: unknown, label = "result"): Promise<ScanReport> {
    const all: Slot[] = [];
    collect(value, label, all);
    // A string too long to be remembered is not looked up either (hashing it costs ~1 ns a character).
    const slots = all.filter((s) => s.text.length > CLEAN_MAX || !this.clean.has(s.text));
    if (slots.length === 0) return { findings: [], redacted: value };
    const found = await this.run(slots.map((s) => s.text));
    const byRule = new Map<string, RuleFindings>();
    const hit = new Map<Slot, Finding[]>();
    found.forEach((fs, i) => {
      if (fs.length === 0) {
        this.remember(slots[i].text);
        return;
      }
      hit.set(slots[i], fs);
      for (const f of fs) {
        let r = byRule.get(f.rule);
        if (!r) byRule.set(f.rule, (r = { rule: f.rule, count: 0, ranges: [], fingerprints: [] }));
        r.count++;
        r.ranges.push({ at: slots[i].at, start: f.start, end: f.end });
        const fp = this.fingerprint(slots[i].text.slice(f.start, f.end));
        if (!r.fingerprints.includes(fp)) r.fingerprints.push(fp);
      }
    });
    if (hit.size === 0) return { findings: [], redacted: value };
    return { findings: [...byRule.values()], redacted: rebuild(value, hit, all) };
  }

  private remember(text: string): void {
    if (text.length > CLEAN_MAX) return;
    if (this.clean.size >= CLEAN_ENTRIES) this.clean.clear();
    this.clean.add(text);
  }

  /** Look for these too from now on (replacing the last such set); a changed set is sent to the worker once. */
  setExtra(needles: readonly Needle[]): void {
    if (needles === this.extra) return;
    const id = needles.map((n) => `${n.rule}\0${n.text}`).join("\0");
    if (id === this.extraId) return;
    this.extra = needles;
    this.extraId = id;
    this.key = nextKey++;
    this.sentKey = false;
    this.inline = undefined;
    this.clean.clear();
  }

  /** The names of the known secrets (never their values), for `latch explain`. */
  knownNames(): string[] {
    return [...new Set(this.needles.map((n) => n.rule.split(":")[1]))].sort();
  }

  fingerprint(secret: string): string {
    return createHmac("sha256", this.hmacKey).update(secret).digest("hex").slice(0, 16);
  }

  close(): void {
    this.failAll(new DisclosureScanError("the disclosure scanner was closed"));
  }

  private run(texts: string[]): Promise<Finding[][]> {
    let size = 0;
    for (const t of texts) size += t.length;
    if (size < INLINE_MAX) {
      this.inline ??= {
        needles: [...this.needles, ...this.extra].sort((a, b) => b.text.length - a.text.length),
        rules: FORMAT_RULES,
      };
      const d = this.inline;
      return Promise.all(texts.map((t) => scanText(t, d)));
    }
    const w = (this.worker ??= this.spawn());
    const id = this.nextId++;
    const batch: ScanBatch = { id, needlesKey: this.key, texts };
    if (!this.sentKey) {
      const all = [...this.needles, ...this.extra].sort((a, b) => b.text.length - a.text.length);
      batch.needles = { key: this.key, list: all };
      this.sentKey = true;
    }
    return new Promise<Finding[][]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.failAll(new DisclosureScanError(`the disclosure scan did not finish within ${this.deadlineMs / 1000} s`));
      }, this.deadlineMs);
      this.pending.set(id, {
        resolve: (f) => (clearTimeout(timer), resolve(f)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      if (this.pending.size === 1) w.ref();
      w.postMessage(batch);
    });
  }

  private spawn(): Worker {
    const w = startWorker(import.meta.url, "scan-worker");
    this.sentKey = false;
    w.unref();
    w.on("message", (a: ScanAnswer) => {
      const p = this.pending.get(a.id);
      if (!p) return;
      this.pending.delete(a.id);
      if (this.pending.size === 0) w.unref();
      if (a.ok) p.resolve(a.findings);
      else p.reject(new DisclosureScanError(`the disclosure scan failed: ${a.message}`));
    });
    w.on("error", (err) => this.failAll(new DisclosureScanError(`the disclosure scan failed: ${err.message}`)));
    w.on("exit", () => {
      if (this.worker === w) this.failAll(new DisclosureScanError("the disclosure scan thread stopped"));
    });
    return w;
  }

  private failAll(err: Error): void {
    const w = this.worker;
    this.worker = undefined;
    if (w) void w.terminate();
    for (const p of [...this.pending.values()]) p.reject(err);
    this.pending.clear();
  }
}

interface Slot {
  at: string;
  text: string;
  /** The holder and the key (or, for a key, the holder and "key:" + key). */
  holder?: Record<string, unknown> | unknown[];
  key?: string | number;
  isKey?: boolean;
}

function collect(v: unknown, at: string, out: Slot[], holder?: Slot["holder"], key?: string | number): void {
  if (typeof v === "string") {
    if (v.length >= MIN_SCANNED) out.push({ at, text: v, holder, key });
    return;
  }
  if (v === null || typeof v !== "object") return;
  if (Array.isArray(v)) {
    v.forEach((x, i) => collect(x, `${at}[${i}]`, out, v, i));
    return;
  }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k.length >= MIN_SCANNED)
      out.push({ at: `${at}{key}`, text: k, holder: v as Record<string, unknown>, key: k, isKey: true });
    collect(x, `${at}.${k}`, out, v as Record<string, unknown>, k);
  }
}

/** A deep copy of `value` with each hit string (or key) redacted. */
function rebuild(value: unknown, hit: Map<Slot, Finding[]>, slots: Slot[]): unknown {
  if (typeof value === "string") return redactText(value, hit.get(slots[0]) ?? []);
  const copy = structuredClone(value) as Record<string, unknown>;
  // Map each original holder to its copy by walking both in step.
  const twin = new Map<object, Record<string, unknown> | unknown[]>();
  const pair = (a: unknown, b: unknown) => {
    if (a === null || typeof a !== "object") return;
    twin.set(a, b as Record<string, unknown>);
    for (const [k, x] of Object.entries(a)) pair(x, (b as Record<string, unknown>)[k]);
  };
  pair(value, copy);
  // Values first, keys after: a renamed key must carry its already-redacted value.
  const ordered = [...hit].sort(([a], [b]) => Number(a.isKey ?? false) - Number(b.isKey ?? false));
  for (const [slot, fs] of ordered) {
    const h = twin.get(slot.holder!) as Record<string | number, unknown>;
    if (slot.isKey) {
      const k = String(slot.key);
      const v = h[k];
      delete h[k];
      h[redactText(k, fs)] = v;
    } else h[slot.key!] = redactText(slot.text, fs);
  }
  return copy;
}
