// The terminal prompt for `latch call` on a TTY: shows the tool, the reason and the diff, and waits
// for y/N. Anything but y or yes is a no.
import type { Readable, Writable } from "node:stream";
import type { ApprovalAnswer, Approver } from "./approver.js";
import { visibleArgs } from "./visible.js";

export function ttyApprover(input: Readable, output: Writable): Approver {
  return {
    name: "terminal",
    request(req, signal) {
      const lines = [
        "",
        `latch: ${req.tool} needs your approval: ${req.reason}`,
        `arguments: ${visibleArgs(req.args)}`,
        ...(req.diff ? ["", req.diff.trimEnd(), ""] : []),
        ...(req.diffNote ? [`(${req.diffNote})`] : []),
        "Run it? [y/N] ",
      ];
      output.write(lines.join("\n"));
      return new Promise<ApprovalAnswer>((resolve, reject) => {
        let buf = "";
        const done = (fn: () => void) => {
          input.off("data", onData);
          input.off("end", onEnd);
          signal.removeEventListener("abort", onAbort);
          input.pause();
          fn();
        };
        const onData = (chunk: Buffer | string) => {
          buf += chunk.toString();
          const nl = buf.indexOf("\n");
          if (nl === -1) return;
          const word = buf.slice(0, nl).trim().toLowerCase();
          const yes = word === "y" || word === "yes";
          done(() =>
            resolve({
              approved: yes,
              by: "terminal prompt",
              ...(yes ? {} : { reason: "the person at the terminal said no" }),
            }),
          );
        };
        const onEnd = () =>
          done(() =>
            resolve({ approved: false, by: "terminal prompt", reason: "the terminal closed without an answer" }),
          );
        const onAbort = () =>
          done(() => {
            output.write("\n");
            reject(new Error("the prompt was abandoned"));
          });
        input.on("data", onData);
        input.on("end", onEnd);
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
        input.resume();
      });
    },
  };
}
