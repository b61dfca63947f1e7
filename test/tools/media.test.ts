// read_media: images (PNG, GIF, JPEG, WebP) as MCP image content within limits (and not when a file
// only claims to be one, is too large, or claims a decoder-bomb size), PDFs as text per page, and a PDF
// bomb that ends in bounded time with the worker gone.
import assert from "node:assert/strict";
import { truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { deflateSync } from "node:zlib";
// @ts-expect-error: pdfjs-dist (latch's PDF library) ships no types for its image decoders
import { JpegImage } from "pdfjs-dist/legacy/image_decoders/pdf.image_decoders.mjs";
import type { Host } from "../../src/host/create-host.js";
import { toCallToolResult } from "../../src/transports/mcp/results.js";
import { makeFixture } from "../helpers/fixture.js";

const fx = makeFixture();
after(() => fx.cleanup());
let hostP: Promise<Host> | undefined;
const host = () => (hostP ??= fx.host());
const call = async (tool: string, args: Record<string, unknown>): Promise<any> => (await host()).call(tool, args);
const put = (rel: string, b: Buffer) => writeFileSync(path.join(fx.root, rel), b);

// A real 1x1 PNG (and its header with other sizes).
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

/**
 * A baseline grey JPEG of w x h that a real decoder reads: every 8x8 block is flat mid-grey (a DC
 * difference of 0, then end of block), coded with one-code Huffman tables; APP0 and DQT come before
 * SOF0, so finding the size means walking segments.
 */
function jpeg(w: number, h: number): Buffer {
  const seg = (marker: number, body: number[]) => [
    0xff,
    marker,
    (body.length + 2) >> 8,
    (body.length + 2) & 0xff,
    ...body,
  ];
  const oneCode = [1, ...Array<number>(15).fill(0)]; // one code, "0", one bit long
  const bits = 2 * Math.ceil(w / 8) * Math.ceil(h / 8); // "0" for the DC category 0, "0" for end of block
  const scan = Buffer.alloc(Math.ceil(bits / 8));
  scan[scan.length - 1] = 0xff >> (bits % 8 || 8); // padded with 1 bits
  return Buffer.from([
    ...[0xff, 0xd8],
    ...seg(0xe0, [...Buffer.from("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    ...seg(0xdb, [0, ...Array<number>(64).fill(1)]),
    ...seg(0xc0, [8, h >> 8, h & 0xff, w >> 8, w & 0xff, 1, 1, 0x11, 0]),
    ...seg(0xc4, [0x00, ...oneCode, 0]),
    ...seg(0xc4, [0x10, ...oneCode, 0]),
    ...seg(0xda, [1, 1, 0x00, 0, 63, 0]),
    ...scan,
    ...[0xff, 0xd9],
  ]);
}

/** What pdfjs-dist's JPEG decoder makes of the bytes: size and the distinct grey levels. */
function decodeJpeg(b: Buffer): { width: number; height: number; levels: number[] } {
  const j = new JpegImage();
  j.parse(new Uint8Array(b));
  const px: Uint8Array = j.getData({ width: j.width, height: j.height });
  return { width: j.width, height: j.height, levels: [...new Set(px)] };
}

// The three kinds of WebP, 1x1 each, from Google's WebP FAQ ("How can I detect browser support for
// WebP?"): lossy (a "VP8 " chunk), lossless ("VP8L") and extended with alpha ("VP8X").
const WEBP = {
  "VP8 ": Buffer.from("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA", "base64"),
  VP8L: Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64"),
  VP8X: Buffer.from(
    "UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==",
    "base64",
  ),
};

/** A WebP of that kind whose header claims w x h (each kind keeps its size in its own place). */
function webpClaiming(kind: keyof typeof WEBP, w: number, h: number): Buffer {
  const b = Buffer.from(WEBP[kind]);
  if (kind === "VP8 ") {
    b.writeUInt16LE(w, 26); // 14 bits of size, 2 of scale (0)
    b.writeUInt16LE(h, 28);
  } else if (kind === "VP8L") {
    const bits = b.readUInt32LE(21);
    b.writeUInt32LE(((bits & 0xf0000000) | ((h - 1) << 14) | (w - 1)) >>> 0, 21);
  } else {
    b.writeUIntLE(w - 1, 24, 3);
    b.writeUIntLE(h - 1, 27, 3);
  }
  return b;
}

function pngClaiming(w: number, h: number): Buffer {
  const b = Buffer.from(PNG);
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b;
}

/** A PDF with one page per string, Helvetica text; xref offsets computed. */
function makePdf(pages: string[], extraStream?: Buffer): Buffer {
  const objs: Buffer[] = [];
  const n = pages.length;
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objs.push(Buffer.from("<< /Type /Catalog /Pages 2 0 R >>"));
  objs.push(Buffer.from(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${n} >>`));
  objs.push(Buffer.from("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"));
  pages.forEach((text, i) => {
    objs.push(
      Buffer.from(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
      ),
    );
    const body = extraStream && i === 0 ? extraStream : Buffer.from(`BT /F1 12 Tf 72 720 Td (${text}) Tj ET`);
    const filter = extraStream && i === 0 ? " /Filter /FlateDecode" : "";
    objs.push(
      Buffer.concat([Buffer.from(`<< /Length ${body.length}${filter} >>\nstream\n`), body, Buffer.from("\nendstream")]),
    );
  });
  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n")];
  const offsets: number[] = [];
  let size = parts[0].length;
  objs.forEach((o, i) => {
    offsets.push(size);
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), o, Buffer.from("\nendobj\n")]);
    parts.push(b);
    size += b.length;
  });
  const xref = [`xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`];
  for (const off of offsets) xref.push(`${String(off).padStart(10, "0")} 00000 n \n`);
  xref.push(`trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`);
  parts.push(Buffer.from(xref.join("")));
  return Buffer.concat(parts);
}

describe("read_media: images", () => {
  test("a PNG and a GIF come back as image content, by their bytes, whatever their names", async () => {
    put("pic.png", PNG);
    put("anim.dat", GIF);
    const r = await call("read_media", { path: "pic.png" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.result.mime_type, "image/png");
    assert.deepEqual([r.result.width, r.result.height], [1, 1]);
    const mcp = toCallToolResult(r);
    const img = mcp.content.find((c) => c.type === "image") as { data: string; mimeType: string };
    assert.equal(img.mimeType, "image/png");
    assert.deepEqual(Buffer.from(img.data, "base64"), PNG);
    assert.ok(!(mcp.content[0] as { text: string }).text.includes(img.data), "no base64 in the text");
    const g = await call("read_media", { path: "anim.dat" });
    assert.equal(g.result.mime_type, "image/gif");
  });

  test("a binary file named .png is not an image; a huge image and a decoder bomb are refused", async () => {
    put("fake.png", Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    let r = await call("read_media", { path: "fake.png" });
    assert.equal(r.status, "error");
    assert.equal(r.code, "EUNSUPPORTED");
    put("huge.png", Buffer.concat([PNG, Buffer.alloc(6 * 1024 * 1024)]));
    r = await call("read_media", { path: "huge.png" });
    assert.equal(r.code, "ETOOLARGE");
    assert.ok(JSON.stringify(r).length < 2000, "nothing of the file is sent");
    // 3 GB (sparse): refused by its size, before it is read (readFile would fail past 2 GiB, or fill memory).
    put("vast.pdf", Buffer.from("%PDF-1.4\n"));
    truncateSync(path.join(fx.root, "vast.pdf"), 3 * 1024 ** 3);
    r = await call("read_media", { path: "vast.pdf" });
    assert.equal(r.code, "ETOOLARGE", JSON.stringify(r));
    assert.match(r.message, /3\.0 GiB/);
    put("bomb.png", pngClaiming(100_000, 100_000));
    r = await call("read_media", { path: "bomb.png" });
    assert.equal(r.code, "ETOOLARGE");
    assert.match(r.message, /100000x100000/);
  });

  test("a JPEG comes back as image content with its size, whatever its name", async () => {
    const jpg = jpeg(16, 8);
    assert.deepEqual(decodeJpeg(jpg), { width: 16, height: 8, levels: [128] }, "a real decoder reads it");
    put("photo.jpg", jpg);
    put("photo.bin", jpg);
    for (const name of ["photo.jpg", "photo.bin"]) {
      const r = await call("read_media", { path: name });
      assert.equal(r.status, "ok", JSON.stringify(r));
      assert.equal(r.result.mime_type, "image/jpeg");
      assert.deepEqual([r.result.width, r.result.height], [16, 8]);
      const img = toCallToolResult(r).content.find((c) => c.type === "image") as { data: string; mimeType: string };
      assert.equal(img.mimeType, "image/jpeg");
      assert.deepEqual(Buffer.from(img.data, "base64"), jpg);
    }
  });

  test("a WebP of each kind (lossy, lossless, extended) comes back as image content with its size", async () => {
    for (const [kind, webp] of Object.entries(WEBP)) {
      put("pic.webp", webp);
      const r = await call("read_media", { path: "pic.webp" });
      assert.equal(r.status, "ok", `${kind}: ${JSON.stringify(r)}`);
      assert.equal(r.result.mime_type, "image/webp", kind);
      assert.deepEqual([r.result.width, r.result.height], [1, 1], kind);
      const img = toCallToolResult(r).content.find((c) => c.type === "image") as { data: string; mimeType: string };
      assert.equal(img.mimeType, "image/webp", kind);
      assert.deepEqual(Buffer.from(img.data, "base64"), webp, kind);
    }
  });

  test("a file named .jpg or .webp that is not one is not an image", async () => {
    const fakes: [string, Buffer][] = [
      ["notes.jpg", Buffer.from("just some text, not a picture\n")],
      ["almost.jpg", Buffer.from([0xff, 0xd8, 0x00, 0xe0, 0, 16, 0, 0, 0, 0, 0, 0])], // SOI, then no marker
      ["notes.webp", Buffer.from("RIFF\x1a\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0", "latin1")], // RIFF, not WEBP
    ];
    for (const [name, bytes] of fakes) {
      put(name, bytes);
      const r = await call("read_media", { path: name });
      assert.equal(r.status, "error", `${name}: ${JSON.stringify(r)}`);
      assert.equal(r.code, "EUNSUPPORTED", name);
      assert.doesNotMatch(JSON.stringify(r), /"image"/, name);
    }
  });

  test("a JPEG or a WebP whose header claims a decoder-bomb size is refused", async () => {
    // A real 13000x9000 JPEG (117 million pixels, in under half a megabyte): too wide, though not too tall.
    const wide = jpeg(13_000, 9_000);
    assert.ok(wide.length < 500_000);
    put("wide.jpg", wide);
    let r = await call("read_media", { path: "wide.jpg" });
    assert.equal(r.code, "ETOOLARGE", JSON.stringify(r).slice(0, 300));
    assert.match(r.message, /13000x9000/);
    put("tall.jpg", jpeg(8, 12_001));
    r = await call("read_media", { path: "tall.jpg" });
    assert.equal(r.code, "ETOOLARGE");
    assert.match(r.message, /8x12001/);
    for (const [kind, w, h] of [
      ["VP8 ", 16_383, 2],
      ["VP8L", 2, 16_384],
      ["VP8X", 20_000, 3],
    ] as const) {
      put("bomb.webp", webpClaiming(kind, w, h));
      r = await call("read_media", { path: "bomb.webp" });
      assert.equal(r.code, "ETOOLARGE", `${kind}: ${JSON.stringify(r).slice(0, 300)}`);
      assert.match(r.message, new RegExp(`${w}x${h}`), kind);
    }
  });

  test("an image outside the root is refused", async () => {
    writeFileSync(path.join(fx.base, "outside.png"), PNG);
    assert.equal((await call("read_media", { path: "../outside.png" })).status, "refused");
  });
});

describe("read_media: PDFs", () => {
  test("text per page, and pages chosen by first_page/last_page", async () => {
    put("doc.pdf", makePdf(["Hello page one", "Second page here", "Third"]));
    const r = await call("read_media", { path: "doc.pdf" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.result.pages_total, 3);
    assert.deepEqual(
      r.result.pages.map((p: any) => [p.page, p.text.trim()]),
      [
        [1, "Hello page one"],
        [2, "Second page here"],
        [3, "Third"],
      ],
    );
    const two = await call("read_media", { path: "doc.pdf", first_page: 2, last_page: 2 });
    assert.deepEqual(
      two.result.pages.map((p: any) => p.page),
      [2],
    );
    assert.match(two.result.note, /continue with first_page 3/);
  });

  test("a PDF bomb (a content stream that inflates to 300 MB) ends in bounded time, and the next read works", async () => {
    const bomb = deflateSync(Buffer.alloc(300 * 1024 * 1024, 0x20));
    put("bomb.pdf", makePdf(["x"], bomb));
    const started = Date.now();
    const r = await call("read_media", { path: "bomb.pdf" });
    assert.ok(Date.now() - started < 60_000, "does not hang");
    // Either pdfjs gives up on it, or the deadline or the heap cap ends it: never a hang, never a crash.
    if (r.status === "ok") assert.ok(JSON.stringify(r.result).length < 200_000);
    else assert.ok(["ETIMEDOUT", "ETOOLARGE", "EPDF"].includes(r.code), JSON.stringify(r));
    const after = await call("read_media", { path: "doc.pdf", last_page: 1 });
    assert.equal(after.status, "ok");
  });
});
