// macOS: the same Containment interface would be met by `sandbox-exec` with a generated Seatbelt
// profile (deny default; file-read* everywhere but the control plane and credential stores;
// file-write* under the workspace only in workspace-write mode, minus the masks of masks.ts;
// network-outbound denied unless allowed), as sandbox-runtime's macos-sandbox-utils.ts does. It is not
// built: nothing here can test it. The probe reports it unavailable, so `auto` runs uncontained with
// the stricter built-in tiers, and `required` refuses with this reason.
import type { ProbeResult } from "./types.js";

export function probeSeatbelt(): ProbeResult {
  return {
    available: false,
    reason: "latch has no macOS sandbox yet (a sandbox-exec Seatbelt profile is planned, not built)",
    fix: 'On macOS set `_containment = "auto"` (runs uncontained, with the stricter built-in rules) or `"off"`; containment needs Linux with bubblewrap.',
  };
}
