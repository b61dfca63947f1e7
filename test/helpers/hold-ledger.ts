// Holds latch.db's write lock (BEGIN IMMEDIATE) until stdin closes: another real process, for the
// ledger-busy tests. Prints "held" once it has the lock.
import Database from "better-sqlite3";

const db = new Database(process.argv[2]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("held\n");
await new Promise((resolve) => process.stdin.on("end", resolve).resume());
db.exec("ROLLBACK");
db.close();
