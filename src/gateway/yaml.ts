// The yaml package for reading OpenAPI specs, loaded on first use (a dynamic import of this file):
// a static import here, so the bundle resolves the package's CommonJS exports as everywhere else.
export { parse } from "yaml";
