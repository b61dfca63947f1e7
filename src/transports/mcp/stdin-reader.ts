// fd 0 as the stdio server reads it when it is a pipe or a socket: one handle, each read into one reused
// buffer. The command's entry may open it before the program loads (answer-cache.ts answers the first
// messages from the last start's answers), and the stdio wire then takes it over, with what was read
// meanwhile: two handles on fd 0 would race for its bytes.
import { fstatSync } from "node:fs";
import { Socket } from "node:net";

/** One read from a stdin pipe, into a buffer reused for every read. */
const READ_BYTES = 64 * 1024;

export interface StdinReader {
  readonly socket: Socket;
  /** Where each read goes; the bytes are the reused buffer's, valid only during the call. */
  sink: (chunk: Buffer) => void;
}

/**
 * Stdin as a socket that reads into one buffer, reused for every read (`onread`), when it is a pipe or
 * a socket, as MCP clients give it: a stream allocates each 64 KiB it reads, and those stay in memory
 * until V8 next collects, which a stream of large messages that make little garbage of their own
 * leaves for long. The sink copies what it keeps. Else (a file, a terminal): undefined.
 */
export function openStdinReader(): StdinReader | undefined {
  try {
    const st = fstatSync(0);
    if (!st.isFIFO() && !st.isSocket()) return undefined;
  } catch {
    return undefined; // no stdin to look at: process.stdin says what there is
  }
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  let sink: (chunk: Buffer) => void = () => undefined;
  const onread = {
    buffer,
    callback: (n: number) => {
      sink(buffer.subarray(0, n));
      return true;
    },
  };
  // `onread` is documented for the constructor (Node 12 on); @types/node lists it only for connect().
  const socket = new Socket({ fd: 0, readable: true, writable: false, onread } as ConstructorParameters<
    typeof Socket
  >[0]);
  return {
    socket,
    get sink() {
      return sink;
    },
    set sink(f) {
      sink = f;
    },
  };
}
