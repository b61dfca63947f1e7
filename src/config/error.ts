/** A configuration that cannot start a host: the message names the file, line and key, and the fix. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
