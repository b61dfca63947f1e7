// The yaml package, loaded by discover.ts at the first skill folder found (a dynamic import of this
// file): a workspace without skills, most of them, never loads it. A static import here, so the bundle
// resolves the package's CommonJS exports as everywhere else.
export { parseDocument } from "yaml";
