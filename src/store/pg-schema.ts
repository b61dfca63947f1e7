// The PostgreSQL schema, in numbered migrations recorded in `latch_schema`, as src/fs/db.ts does for
// SQLite. Instances of a fleet start at once: the migrations run in one transaction under an advisory
// lock, so one applies them and the others find them applied. A database made by a newer latch is
// refused, never written to.
import type { PoolClient } from "pg";
import { ToolError } from "../errors.js";

/** The advisory lock key the migrations hold ("latch" in ASCII). */
const MIGRATE_LOCK = 0x6c61746368;

/** Migration N (1-based) brings the database from version N-1 to N. Append only. */
const MIGRATIONS: readonly { what: string; sql: string }[] = [
  {
    what: "the approval queue, labelled by host, workspace and session; a NOTIFY of the id on every change",
    sql: `CREATE TABLE approvals (
      id text PRIMARY KEY, host text NOT NULL, workspace text NOT NULL, session text NOT NULL,
      tool text NOT NULL, reason text NOT NULL, args text NOT NULL, diff text, diff_note text,
      meta text NOT NULL, shown_sha256 text NOT NULL, state text NOT NULL,
      answered_by text, note text, created_at bigint NOT NULL, expires_at bigint NOT NULL, pid integer NOT NULL);
    CREATE FUNCTION latch_approvals_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('latch_approvals', CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
      RETURN NULL;
    END $$;
    CREATE TRIGGER latch_approvals_notify AFTER INSERT OR UPDATE OR DELETE ON approvals
      FOR EACH ROW EXECUTE FUNCTION latch_approvals_notify();`,
  },
  {
    what: "each run's head, and a copy of every policy-log line (the same canonical JSON and hashes)",
    sql: `CREATE TABLE runs (
      run_id text PRIMARY KEY, host text NOT NULL, workspace text NOT NULL, file text NOT NULL,
      pid integer NOT NULL, started_at text NOT NULL, head text NOT NULL, lines integer NOT NULL,
      updated_at text NOT NULL);
    CREATE TABLE log_records (
      run_id text NOT NULL REFERENCES runs (run_id), sequence integer NOT NULL,
      previous_sha256 text NOT NULL, record text NOT NULL, record_sha256 text NOT NULL,
      PRIMARY KEY (run_id, sequence));`,
  },
  {
    what: "signed checkpoints of the runs' heads (ed25519; the key stays in each instance's state dir)",
    sql: `CREATE TABLE checkpoints (
      id bigserial PRIMARY KEY, run_id text NOT NULL, lines integer NOT NULL, head text NOT NULL,
      body text NOT NULL, public_key text NOT NULL, signature text NOT NULL);`,
  },
];

const PG_SCHEMA_VERSION = MIGRATIONS.length;

/** Bring the database to PG_SCHEMA_VERSION; throws ESTATE for a newer one. */
export async function migratePg(client: PoolClient, where: string): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATE_LOCK]);
    await client.query("CREATE TABLE IF NOT EXISTS latch_schema (version integer NOT NULL)");
    const r = await client.query<{ version: number }>("SELECT version FROM latch_schema");
    if (r.rows.length === 0) await client.query("INSERT INTO latch_schema (version) VALUES (0)");
    const from = r.rows[0]?.version ?? 0;
    if (from > PG_SCHEMA_VERSION)
      throw new ToolError(
        "ESTATE",
        `The state database ${where} was made by a newer latch (schema version ${from}; this latch knows up to ${PG_SCHEMA_VERSION}). Run the newer latch, or point --state at another database.`,
      );
    for (let v = from; v < PG_SCHEMA_VERSION; v++) await client.query(MIGRATIONS[v].sql);
    if (from < PG_SCHEMA_VERSION) await client.query("UPDATE latch_schema SET version = $1", [PG_SCHEMA_VERSION]);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}
