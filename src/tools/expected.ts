// `expected_sha256` on write tools, for clients that retry a call whose answer was lost (a dropped
// connection): the change lands only on the bytes it was made for, and a retry of a change that
// already landed answers `already_applied` and writes nothing (checkExpected in src/edit/mutate.ts).
// Each field is a function that makes it, called in a tool's schema maker (defineTool, ./define.ts).
import { z } from "zod";

const sha256Hex = () => z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lowercase hex (64 characters 0-9a-f)");

const WHY =
  "The change lands only if the file holds exactly these bytes. A retry of a change that already landed (same call, same expected_sha256) answers already_applied: true and writes nothing. For retrying after a lost answer.";

export const expectedField = () =>
  sha256Hex()
    .optional()
    .describe(
      `The sha256 (hex) of the file's bytes this change is made for, as read_file or the last write reported (new_sha256). ${WHY}`,
    );

export const expectedMapField = () =>
  z
    .record(z.string(), sha256Hex())
    .optional()
    .describe(`Per file the patch changes (its path as in the patch): the sha256 (hex) of its bytes now. ${WHY}`);
