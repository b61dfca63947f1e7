// Resumability for MCP over HTTP: each session keeps the last few messages it sent on its SSE streams,
// so a client whose connection dropped during a call reconnects (GET with Last-Event-ID, which the
// SDK's client does by itself once it saw the stream's priming event) and receives the call's answer:
// it learns the outcome of its last call instead of guessing. Bounded per session, oldest first out:
// at most MAX_EVENTS messages and MAX_BYTES of them; a client that comes back later than that finds
// nothing to replay and retries its write with expected_sha256 (already applied, or lands once).
import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const MAX_EVENTS = 64;
const MAX_BYTES = 1024 * 1024;

interface Stored {
  id: string;
  stream: string;
  message: JSONRPCMessage;
  bytes: number;
}

/** One session's store (one per transport): ids are `STREAM.SEQ`, in the order sent. */
export class BoundedEventStore implements EventStore {
  private readonly events: Stored[] = [];
  private bytes = 0;
  private seq = 0;

  storeEvent(stream: string, message: JSONRPCMessage): Promise<string> {
    const id = `${stream}.${++this.seq}`;
    const bytes = Buffer.byteLength(JSON.stringify(message));
    this.events.push({ id, stream, message, bytes });
    this.bytes += bytes;
    while (this.events.length > MAX_EVENTS || (this.bytes > MAX_BYTES && this.events.length > 1)) {
      this.bytes -= this.events.shift()!.bytes;
    }
    return Promise.resolve(id);
  }

  getStreamIdForEventId(id: string): Promise<string | undefined> {
    return Promise.resolve(this.events.find((e) => e.id === id)?.stream);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (id: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const at = this.events.findIndex((e) => e.id === lastEventId);
    if (at < 0) return ""; // evicted, or never ours: nothing to replay
    const stream = this.events[at].stream;
    // A priming event has no message ({}): only real ones are sent again.
    for (const e of this.events.slice(at + 1))
      if (e.stream === stream && Object.keys(e.message).length > 0) await send(e.id, e.message);
    return stream;
  }
}
