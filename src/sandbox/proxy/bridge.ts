// The in-box half of a network grant. The box has no network and its seccomp filter refuses
// socket(AF_UNIX) (seccomp.ts), so nothing inside can open a path to any host socket. Instead latch
// starts the box with node's IPC channel already connected (a socketpair libuv made, inherited as
// fd 4), and the launcher starts this bridge first: node listening on the box's own loopback, passing
// each accepted connection's descriptor to latch over that channel (SCM_RIGHTS), where the filtering
// proxy (filter.ts) serves it. The launcher then closes fd 4 and unsets node's channel variables
// before it runs the program, which reaches the outside only as `HTTP(S)_PROXY` = the bridge.

/** The bridge, run with `node -e` (no file to find in a bundle or a source tree): argv[1] is the fifo for its port. */
const BRIDGE = `
const net = require("node:net");
const fs = require("node:fs");
const server = net.createServer({ pauseOnConnect: true }, (c) => process.send("c", c));
process.on("disconnect", () => process.exit(0));
server.listen(0, "127.0.0.1", () => fs.writeFileSync(process.argv[1], server.address().port + "\\n"));
`;

/** The descriptor node's IPC channel has in the box's first process (exec.ts puts "ipc" there). */
const BRIDGE_FD = 4;

/** The environment the launcher reads to start the bridge; unset before the program runs. */
export function bridgeEnvironment(): NodeJS.ProcessEnv {
  return { LATCH_NET_NODE: process.execPath, LATCH_NET_BRIDGE: BRIDGE };
}

/**
 * Shell text run by the launcher before it execs the program: start the bridge, wait for its port
 * (through a fifo in the box's private /tmp), set the proxy variables every common client reads, and
 * leave the program nothing of the channel. A bridge that does not start ends the call (exit 126).
 */
export function bridgePrelude(): string {
  const proxyVars = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]
    .map((v) => `${v}="$u"`)
    .join(" ");
  return [
    `f=/tmp/.latch-net-$$`,
    `mkfifo -m 600 "$f" || exit 126`,
    // 5>&-: the init's status pipe (init.ts STATUS_FD) is not the bridge's to hold open.
    `"$LATCH_NET_NODE" -e "$LATCH_NET_BRIDGE" "$f" </dev/null >/dev/null 2>&1 5>&- &`,
    `read -r p <"$f"; rm -f "$f"`,
    `[ -n "$p" ] || { echo "latch: the network bridge did not start" >&2; exit 126; }`,
    `u="http://127.0.0.1:$p"`,
    // npm reads its own variables first; NO_PROXY would send a name around the proxy (to nowhere).
    `export ${proxyVars} npm_config_proxy="$u" npm_config_https_proxy="$u" NO_PROXY= no_proxy=`,
    `unset LATCH_NET_NODE LATCH_NET_BRIDGE NODE_CHANNEL_FD NODE_CHANNEL_SERIALIZATION_MODE f p u`,
    `exec ${BRIDGE_FD}>&-`,
    "",
  ].join("\n");
}
