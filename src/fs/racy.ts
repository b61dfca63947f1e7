// A file's or folder's times say it is unchanged only where they could have told a change apart. The
// kernel stamps them from a coarse clock (a few ms), and some file systems keep whole seconds (ext3,
// ext4 with 128-byte inodes) or two (FAT): a change in the same tick as the one seen leaves the same
// ctime, and an answer kept by it goes stale (review g48: on such an ext4, a folder's kept listing
// hid a new repository from the guard, PWNED with nothing said). So, as git does with "racily clean"
// index entries, an answer read too soon after its ctime is not kept.

/** Past a fine ctime: the kernel's coarse clock and Date.now()'s, apart. */
const FINE_MS = 50;
/** Past a ctime of whole seconds: FAT's two. */
const COARSE_MS = 2000;

/**
 * Whether what was read at `readAtMs` (Date.now()) of something whose ctime was `ctimeMs` may miss a
 * change that kept that ctime. A ctime of whole seconds is taken for a coarse file system's (on a
 * fine one, one in a billion: it is then only read again).
 */
export function racy(readAtMs: number, ctimeMs: number): boolean {
  return readAtMs - ctimeMs < (ctimeMs % 1000 === 0 ? COARSE_MS : FINE_MS);
}
