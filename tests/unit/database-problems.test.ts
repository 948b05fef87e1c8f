// Which database failures are problems only an operator can fix, with the code /readyz shows,
// what it may show unauthenticated, and the fix the log line carries.
import { expect, test } from "bun:test";
import postgres from "postgres";
import { databaseProblem } from "../../src/database/problems.ts";

const pg = (code: string, message: string) => new postgres.PostgresError({ code, message } as never);
const client = (code: string, message: string) => Object.assign(new Error(message), { code });

test.each([
  [pg("42P01", 'relation "product_cost_months" does not exist'), "MIGRATIONS_PENDING", 'relation "product_cost_months" does not exist', "run `product-cost-export migrate`"],
  [pg("42883", "function cost_total(numeric) does not exist"), "MIGRATIONS_PENDING", "function cost_total(numeric) does not exist", "migrate"],
  [pg("42501", "permission denied for table product_cost_months"), "PERMISSION_DENIED", "permission denied for table product_cost_months", "grant the service's role SELECT"],
  [pg("3D000", 'database "costz" does not exist'), "DATABASE_NOT_FOUND", "the database named in DATABASE_URL does not exist", "database name"],
  [pg("28P01", 'password authentication failed for user "svc"'), "AUTHENTICATION_FAILED", "PostgreSQL refused the user or password of DATABASE_URL", "user and password"],
  [client("NOT_POSTGRESQL", 'the server at db:80 is not a PostgreSQL server: it answered "HTTP/1.1 400"'), "NOT_POSTGRESQL", "the server at DATABASE_URL's host and port is not PostgreSQL", "another kind of server"],
  [client("ECONNREFUSED", "connect ECONNREFUSED 10.0.0.5:5432"), "DATABASE_UNAVAILABLE", "PostgreSQL cannot be reached or did not answer in time", "PostgreSQL is running"],
  [pg("57P03", "the database system is starting up"), "DATABASE_UNAVAILABLE", "PostgreSQL cannot be reached or did not answer in time", "PostgreSQL is running"],
])("%p is %s", (err, code, summary, fixPart) => {
  const found = databaseProblem(err);
  expect({ code: found?.code as string | undefined, summary: found?.summary }).toEqual({ code, summary });
  expect(found?.fix).toContain(fixPart);
  // The cause keeps the driver's own words for the log.
  expect(found?.cause).toContain((err as Error).message);
});

test.each([
  ["a statement timeout", pg("57014", "canceling statement due to statement timeout")],
  ["a lost connection", client("CONNECTION_CLOSED", "write CONNECTION_CLOSED db:5432")],
  ["a bad cast", pg("22008", "date/time field value out of range")],
  ["a bug", new TypeError("x is undefined")],
])("%s is a failure of one request, not a problem of the database", (_, err) => {
  expect(databaseProblem(err)).toBeUndefined();
});
