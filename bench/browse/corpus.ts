// A generated corpus for the browse benchmarks: 50,000 text files (~1.1 GB) in 1,000 folders, 1% of
// them binary, and nested .gitignore files in one folder in ten (each ignoring *.tmp and generated/,
// which exist only there and hold needles too). Deterministic: the same seed gives the same bytes.
//   node --import tsx bench/browse/corpus.ts [DIR]    (default /tmp/latch-bench-corpus)
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export const NEEDLES = {
  literal: "latch_needle_literal",
  regex: "err_code_[0-9]{4}",
  caseInsensitive: "latchmixedcase",
};

/** The peer rg's walk in every browse bench: plain rg, told only to skip what latch's walk skips. */
export const PEER_RG_WALK: readonly string[] = [
  "--no-config",
  "--hidden",
  "--no-require-git",
  "-g",
  "!.git",
  "-g",
  "!node_modules",
];

export const CORPUS = { files: 50_000, topDirs: 100, subDirs: 10, ignoredEvery: 10, binaryEvery: 100 };

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "the of and to in is for on that with as by it this from at be are or an not have which you was all can has but more one will new if there also some other when into only than its time these two may then first any use out like over such where most after even because through between how each under same while being both those".split(
    " ",
  );
const EXTS = [".ts", ".js", ".md", ".txt", ".json", ".py"];

function makeLines(rand: () => number, n: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const len = 4 + Math.floor(rand() * 14);
    const parts: string[] = [];
    for (let k = 0; k < len; k++) parts.push(WORDS[Math.floor(rand() * WORDS.length)]);
    if (rand() < 0.3) parts.push(`value_${Math.floor(rand() * 100000)};`);
    lines.push("  ".repeat(Math.floor(rand() * 4)) + parts.join(" "));
  }
  return lines;
}

/** One file's text: pool lines, with needles (and near misses) planted at a low rate. */
function fileText(rand: () => number, pool: string[], bytes: number): string {
  const out: string[] = [];
  let size = 0;
  while (size < bytes) {
    let line = pool[Math.floor(rand() * pool.length)];
    const r = rand();
    if (r < 0.0002) line += ` ${NEEDLES.literal}`;
    else if (r < 0.0004) line += ` err_code_${1000 + Math.floor(rand() * 9000)}`;
    else if (r < 0.0006)
      line += " err_code_12x"; // a near miss for the regex
    else if (r < 0.0008) line += [" LatchMixedCase", " LATCHMIXEDCASE", " latchmixedcase"][Math.floor(rand() * 3)];
    out.push(line);
    size += line.length + 1;
  }
  return out.join("\n") + "\n";
}

export function buildCorpus(dir: string, seed = 42): { files: number; bytes: number } {
  const rand = prng(seed);
  const pool = makeLines(rand, 20_000);
  const perDir = CORPUS.files / (CORPUS.topDirs * CORPUS.subDirs);
  let files = 0;
  let bytes = 0;
  const write = (p: string, data: string | Buffer) => {
    writeFileSync(p, data);
    files++;
    bytes += typeof data === "string" ? Buffer.byteLength(data) : data.length;
  };
  for (let t = 0; t < CORPUS.topDirs; t++) {
    for (let s = 0; s < CORPUS.subDirs; s++) {
      const d = path.join(dir, `mod${String(t).padStart(3, "0")}`, `part${s}`);
      mkdirSync(d, { recursive: true });
      for (let f = 0; f < perDir; f++) {
        const n = files;
        const size = 4_000 + Math.floor(rand() * 36_000);
        if (n % CORPUS.binaryEvery === 7) {
          const text = Buffer.from(fileText(rand, pool, size));
          write(
            path.join(d, `blob_${f}.bin`),
            Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 0]), text]),
          );
        } else {
          write(path.join(d, `file_${f}${EXTS[f % EXTS.length]}`), fileText(rand, pool, size));
        }
      }
      if ((t * CORPUS.subDirs + s) % CORPUS.ignoredEvery === 3) {
        write(path.join(d, ".gitignore"), "*.tmp\ngenerated/\n");
        for (let k = 0; k < 3; k++) write(path.join(d, `scratch_${k}.tmp`), fileText(rand, pool, 20_000));
        mkdirSync(path.join(d, "generated"), { recursive: true });
        for (let k = 0; k < 3; k++) write(path.join(d, "generated", `gen_${k}.txt`), fileText(rand, pool, 20_000));
      }
    }
  }
  return { files, bytes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = path.resolve(process.argv[2] ?? "/tmp/latch-bench-corpus");
  if (existsSync(path.join(dir, "mod000"))) {
    console.log(`${dir} already holds a corpus; remove it to rebuild.`);
  } else {
    const t0 = Date.now();
    const { files, bytes } = buildCorpus(dir);
    console.log(
      `${dir}: ${files} files, ${(bytes / 1e9).toFixed(2)} GB, in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
  }
}
