// Preloaded once per `bun test` process (bunfig.toml): releases the run's databases at the end.
import { afterAll } from "bun:test";
import { dropTestDatabase } from "./support/database.ts";
import { closeEmbeddedDatabase } from "./support/embedded.ts";
import { stopThrowawayPostgres } from "./support/postgres.ts";

afterAll(async () => {
  await closeEmbeddedDatabase();
  await dropTestDatabase();
  stopThrowawayPostgres();
});
