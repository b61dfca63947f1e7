import { z } from "zod";
import { ToolError } from "../errors.js";
import { openCurrent } from "../fs/current.js";
import { sniffImage } from "../media/image.js";
import { pdfText } from "../media/pdf.js";
import { humanSize } from "../fs/text.js";
import { defineTool, planPath } from "./define.js";
import { showName } from "../fs/names.js";

/** An image is sent whole or not at all: base64 of at most this many bytes. */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Past this many pixels a side, a client's decoder could be made to allocate gigabytes. */
const MAX_SIDE_PX = 12_000;
const MAX_PDF_BYTES = 50 * 1024 * 1024;
const MAX_PDF_PAGES = 50;

const schema = () =>
  z.strictObject({
    path: z.string().describe("An image (PNG, JPEG, GIF, WebP) or a PDF, relative to the workspace root."),
    first_page: z.number().int().min(1).optional().describe("PDF: the first page to read (default 1)."),
    last_page: z.number().int().min(1).optional().describe(`PDF: the last page (default: ${MAX_PDF_PAGES} pages on).`),
  });

export default defineTool({
  name: "read_media",
  aliases: ["read_image", "read_pdf"],
  toolset: "local_fs",
  axis: "files.read",
  shapes: ["workspace"],
  annotations: { readOnly: true, destructive: false, idempotent: true },
  description: [
    `Look at an image (PNG, JPEG, GIF, WebP, up to ${humanSize(MAX_IMAGE_BYTES)}): it comes back as image content you can see.`,
    `Or read a PDF's text, page by page (at most ${MAX_PDF_PAGES} pages a call; first_page/last_page for more).`,
    "The type is found from the file's bytes, not its name.",
  ].join(" "),
  schema,
  resultBudget: () => Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 4096,
  plan: (args, env) => planPath(args.path, env),
  async run(args, plan, env) {
    const { target } = plan;
    const cur = await openCurrent(target);
    if (cur === null)
      throw new ToolError("ENOENT", `\`${showName(target.rel)}\` does not exist. Check it with find_files.`);
    let bytes: Buffer;
    try {
      // Sized before it is read: a file past every limit is not loaded into memory to be refused.
      if (cur.st.size > MAX_PDF_BYTES)
        throw new ToolError(
          "ETOOLARGE",
          `\`${showName(target.rel)}\` is ${humanSize(cur.st.size)}, over ${humanSize(MAX_PDF_BYTES)} (PDFs; images: ${humanSize(MAX_IMAGE_BYTES)}).`,
        );
      bytes = await cur.fh.readFile();
    } finally {
      await cur.fh.close();
    }
    const img = sniffImage(bytes);
    if (img) {
      if (bytes.length > MAX_IMAGE_BYTES)
        throw new ToolError(
          "ETOOLARGE",
          `\`${showName(target.rel)}\` is ${humanSize(bytes.length)}, over the image limit of ${humanSize(MAX_IMAGE_BYTES)}. Make a smaller copy with the shell (e.g. convert -resize) and read that.`,
        );
      if ((img.width ?? 0) > MAX_SIDE_PX || (img.height ?? 0) > MAX_SIDE_PX)
        throw new ToolError(
          "ETOOLARGE",
          `\`${showName(target.rel)}\` says it is ${img.width}x${img.height} pixels, over ${MAX_SIDE_PX} a side; it is not sent (a decoder would allocate that much). Make a smaller copy first.`,
        );
      return {
        result: {
          path: showName(target.rel),
          mime_type: img.mimeType,
          bytes: bytes.length,
          ...(img.width ? { width: img.width, height: img.height } : {}),
          media: [{ type: "image", mimeType: img.mimeType, data: bytes.toString("base64") }],
        },
      };
    }
    if (bytes.subarray(0, 1024).includes(Buffer.from("%PDF-"))) {
      if (bytes.length > MAX_PDF_BYTES)
        throw new ToolError(
          "ETOOLARGE",
          `\`${showName(target.rel)}\` is ${humanSize(bytes.length)}, over ${humanSize(MAX_PDF_BYTES)}.`,
        );
      const first = args.first_page ?? 1;
      const last = Math.min(args.last_page ?? first + MAX_PDF_PAGES - 1, first + MAX_PDF_PAGES - 1);
      if (last < first) throw new ToolError("EINVAL", "last_page must be at least first_page.");
      const out = await pdfText(
        { data: new Uint8Array(bytes), first, last, maxChars: env.settings.local_fs.maxOutputBytes },
        env.signal,
      );
      const shownLast = out.pages.at(-1)?.page ?? first - 1;
      const result: Record<string, unknown> = {
        path: showName(target.rel),
        mime_type: "application/pdf",
        pages_total: out.numPages,
        pages: out.pages,
      };
      if (out.cut || shownLast < out.numPages)
        result.note = `Showing pages ${first}-${shownLast} of ${out.numPages}${out.cut ? " (the last one cut at the output limit)" : ""}; continue with first_page ${out.cut ? shownLast : shownLast + 1}.`;
      return { result };
    }
    throw new ToolError(
      "EUNSUPPORTED",
      `\`${showName(target.rel)}\` is neither a PNG, JPEG, GIF or WebP image nor a PDF (by its bytes). Use read_file for text, stat_file for anything else.`,
    );
  },
});
