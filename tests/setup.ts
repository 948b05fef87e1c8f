// Preloaded once per `bun test` process (bunfig.toml): drops the run's database at the end.
import { afterAll } from "bun:test";
import { dropTestDatabase } from "./support/database.ts";

afterAll(async () => {
  await dropTestDatabase();
});
