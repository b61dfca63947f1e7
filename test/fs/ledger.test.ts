// The read ledger: per session and canonical path, shared by every process through SQLite, with
// markers that expire after 24 hours.
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import path from "node:path";
import { after, test } from "node:test";
import { Ledger } from "../../src/fs/ledger.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());
const file = path.join(fx.base, "ledger.db");

test("markers are per session, per path and per content; full dominates range", () => {
  const l = new Ledger(file);
  l.record("s1", "/w/a", "h1", "range");
  assert.equal(l.seen("s1", "/w/a", "h1"), "range");
  l.record("s1", "/w/a", "h1", "full");
  l.record("s1", "/w/a", "h1", "range");
  assert.equal(l.seen("s1", "/w/a", "h1"), "full");
  assert.equal(l.seen("s2", "/w/a", "h1"), undefined);
  assert.equal(l.seen("s1", "/w/b", "h1"), undefined);
  assert.equal(l.seen("s1", "/w/a", "h2"), undefined);
  assert.equal(l.readAnyVersion("s1", "/w/a"), true);
  assert.equal(l.readAnyVersion("s2", "/w/a"), false);
  l.close();
});

test("a second connection (another process) sees the same markers", () => {
  const a = new Ledger(file);
  const b = new Ledger(file);
  a.record("shared", "/w/x", "hx", "full");
  assert.equal(b.seen("shared", "/w/x", "hx"), "full");
  b.reserve("shared", "/w/x", "hy", "range");
  b.settle("shared", "/w/x", "hy");
  assert.equal(a.seen("shared", "/w/x", "hx"), undefined, "the old marker is gone after a settled write");
  assert.equal(a.seen("shared", "/w/x", "hy"), "range");
  a.close();
  b.close();
});

test("markers expire after 24 hours", () => {
  const l = new Ledger(file);
  l.record("old", "/w/e", "he", "full");
  const raw = new Database(file);
  raw.prepare("UPDATE reads SET at = ? WHERE session = 'old'").run(Date.now() - 24 * 3600 * 1000 - 1000);
  raw.close();
  assert.equal(l.seen("old", "/w/e", "he"), undefined);
  assert.equal(l.readAnyVersion("old", "/w/e"), false);
  l.close();
  // ... and a new connection sweeps them out of the file.
  const again = new Ledger(file);
  again.close();
  const check = new Database(file);
  assert.equal((check.prepare("SELECT count(*) AS n FROM reads WHERE session = 'old'").get() as { n: number }).n, 0);
  check.close();
});

test("a dropped path's markers go from the database too, for a name kept in its shown form (a backslash, a byte not UTF-8)", () => {
  const l = new Ledger(path.join(fx.base, "drop-shown.db"));
  // A lone surrogate is how latch holds a name byte that is not UTF-8 (fs/names.ts).
  for (const p of ["/w/plain.txt", "/w/back\\slash.txt", "/w/byte-\udcff.txt"]) {
    l.record("s", p, "h1", "full");
    l.drop("s", p);
    assert.equal(l.seen("s", p, "h1"), undefined, `${JSON.stringify(p)}: its marker survived the drop`);
    assert.equal(l.latest("s", p), undefined, JSON.stringify(p));
  }
  l.close();
});
