// Names and tokens unique within this process (temp files, lock holds, renamed locks): a random start
// drawn once, then a counter, where crypto.randomBytes for each cost an edit tens of µs of CPU. Other
// processes are told apart by the pid and place beside it in every such name.
import { randomBytes } from "node:crypto";

let next = randomBytes(6).readUIntBE(0, 6);

/** 8 hex digits, never the same twice in this process before 2^32 of them. */
export function uniqueHex(): string {
  next = (next + 1) % 2 ** 48;
  return (next % 2 ** 32).toString(16).padStart(8, "0");
}

/** 12 hex digits, as uniqueHex, for the tokens that were 6 random bytes. */
export function uniqueHex12(): string {
  next = (next + 1) % 2 ** 48;
  return next.toString(16).padStart(12, "0");
}
