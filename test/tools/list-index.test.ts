// list_dir by offset in a big flat folder starts where an earlier walk of the unchanged folder passed
// that entry (src/browse/list-index.ts). The page must be the one a full walk gives, with the same
// hidden count, and a change to the folder or to a .gitignore must never serve a stale page.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import type { Host } from "../../src/host/create-host.js";
import { expectOk } from "../helpers/expect.js";
import { makeFixture, type Fixture } from "../helpers/fixture.js";

let fx: Fixture;
let host: Host;
const N = 1200;
const name = (i: number) => `f${String(i).padStart(5, "0")}`;

/** Past the index's racy window: a folder changed within a second is never indexed. */
const settle = () => new Promise((r) => setTimeout(r, 1100));

beforeEach(async () => {
  fx = makeFixture("latch-list-index-");
  const files: Record<string, string> = {};
  for (let i = 0; i < N; i++) files[`big/${name(i)}`] = "";
  files["big/.env"] = "SECRET=x\n"; // quarantined: hidden, counted
  fx.write(files);
  host = await fx.host();
  await settle();
});
afterEach(() => fx.cleanup());

async function page(offset: number): Promise<{ entries: string[]; hidden?: number; next_offset?: number }> {
  const r = expectOk(await host.call("list_dir", { path: "big", offset })).result as {
    entries: string;
    hidden?: number;
    next_offset?: number;
  };
  return { ...r, entries: r.entries.split("\n") };
}

test("an offset page served from the index is the page a full walk gives, hidden count included", async () => {
  const first = await page(1000); // walks from the start, and keeps what it passed
  assert.equal(first.entries[0], name(1000));
  assert.equal(first.entries.length, N - 1000);
  assert.equal(first.hidden, 1);
  const again = await page(1000);
  assert.deepEqual(again, first);
  const mid = await page(500);
  assert.equal(mid.entries[0], name(500));
  assert.equal(mid.next_offset, 1000);
});

test("a file added before the offset moves the page at once; the index is never stale", async () => {
  await page(1000);
  writeFileSync(path.join(fx.root, "big/a-first"), "");
  const moved = await page(1000);
  assert.equal(moved.entries[0], name(999), "the new entry sorts first, so every later one moves by one");
  await settle();
  rmSync(path.join(fx.root, "big", name(0)));
  rmSync(path.join(fx.root, "big/a-first"));
  await settle();
  await page(1000);
  const back = await page(1000);
  assert.equal(back.entries[0], name(1001));
});

test("a .gitignore written after the index was kept changes what is counted", async () => {
  await page(1000);
  writeFileSync(path.join(fx.root, ".gitignore"), `big/${name(0)}\nbig/${name(1)}\n`);
  const p = await page(1000);
  assert.equal(p.entries[0], name(1002), "two ignored entries before the offset move the page by two");
  await settle();
  await page(1000);
  assert.equal((await page(1000)).entries[0], name(1002));
});
