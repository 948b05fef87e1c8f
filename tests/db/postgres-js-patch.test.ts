// The fixes carried on postgres.js 3.4.9 (patches/postgres@3.4.9.patch), each an upstream bug
// still open, each with a test here that fails without it. The patch touches only the build
// Bun loads (src/; the cjs/ and cf/ builds are other runtimes').
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";

/** Settles `p` as a string, or "pending" after `ms`. */
const within = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => "resolved", (err: Error & { code?: string }) => `${err.code}: ${err.message}`), Bun.sleep(ms).then(() => "pending")]);

describeWithPostgres("postgres.js as patched", () => {
  const sql = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  afterAll(() => sql.end({ timeout: 2 }));

  test("#1119, #1181: the query after one that failed mid-rows gets exactly its own rows", async () => {
    // Rows 1 to 3 are sent, then row 4 divides by zero.
    const failed = await sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch((err: Error) => err.message);
    expect(failed).toBe("division by zero");
    const next = await sql<{ x: number }[]>`select x from generate_series(1, 5) x`;
    expect({ length: next.length, rows: [...next] }).toEqual({ length: 5, rows: [1, 2, 3, 4, 5].map((x) => ({ x })) });
  });

  test("#1193: a peer that closes while the connection starts fails the query, and is not reconnected to in a loop", async () => {
    let accepted = 0;
    const dropper = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void (accepted++, s.end()), data() {} } });
    const pool = postgres({ host: "127.0.0.1", port: dropper.port, max: 1, backoff: () => 0.5, onnotice: () => {} });
    try {
      expect(await within(pool`select 1`, 2000)).toBe(`CONNECTION_CLOSED: write CONNECTION_CLOSED 127.0.0.1:${dropper.port}`);
      await Bun.sleep(300);
      expect(accepted).toBe(1);
    } finally {
      await pool.end({ timeout: 0 });
      dropper.stop(true);
    }
  });

  test("#1174: target_session_attrs=prefer-standby takes a primary once every host was tried", async () => {
    // Without the fix it drops the primary even when it is the only host (CONNECTION_DESTROYED),
    // and with several hosts tries them again for ever. tests/e2e/replica.test.ts covers a real
    // standby and a host that is down.
    const pool = postgres(SERVER_URL, { max: 1, target_session_attrs: "prefer-standby", onnotice: () => {} });
    try {
      expect(await within(pool`select 1`, 5000)).toBe("resolved");
    } finally {
      await pool.end({ timeout: 0 });
    }
  });

  test("#1208, #1215: a session closed while a query's bytes wait to be written leaves the connection sound, and no query pending", async () => {
    // Issue 42: under load, sessions killed by a restart or pg_terminate_backend left pool slots
    // that never served again (CONNECT_TIMEOUT every 5 s, for minutes). A write under 1 KiB is
    // sent from a setImmediate; the close cancelled that immediate but left its handle set (and
    // the bytes buffered), so the reconnected session's StartupMessage was never sent. And the
    // dead session's error (57P01) was kept and handed to the next session's first query.
    // Deterministic here: the session is terminated while this process is blocked, so the close
    // is seen between the query's write and its immediate.
    const pool = postgres(SERVER_URL, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      const pid = (await pool<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
      const psql = Bun.spawnSync(["psql", SERVER_URL, "-Atc", `select pg_terminate_backend(${pid})`]);
      expect(psql.stdout.toString().trim()).toBe("t");
      const outcomes = [within(pool`select 1`, 3000)];
      // More sent at once and then one after another: the pool may hand one to the dying session
      // between its reset and its close (#1215: it was never settled). Such a one fails with the
      // session's loss; none is left pending, none gets the dead session's 57P01 (only the query
      // it was running may), none waits for CONNECT_TIMEOUT, and the pool serves again at once.
      outcomes.push(within(pool`select 2 as two`, 3000));
      for (let i = 3; i <= 10; i++) outcomes.push(Promise.resolve(await within(pool.unsafe(`select ${i} as n`), 3000)));
      const [onDeadSession, ...after] = await Promise.all(outcomes);
      expect(onDeadSession).toMatch(/^(CONNECTION_CLOSED|57P01|ECONNRESET)/);
      for (const outcome of after) expect(outcome).toMatch(/^(resolved|CONNECTION_CLOSED|ECONNRESET)/);
      expect(after.slice(-3)).toEqual(["resolved", "resolved", "resolved"]);
    } finally {
      await pool.end({ timeout: 0 });
    }
  });

  test("#1192, #1205: a start-up whose array types cannot be read fails its query, never the process, and the next session asks again", async () => {
    // On a hot standby the start-up's own statement (the array types) can meet a recovery
    // conflict (40001): its failure was an unhandled rejection, and the executable exited
    // (tests/e2e/standby-conflicts.test.ts, once in a few runs). Deterministic here: a role
    // that may not read pg_type. Run in a child process: an unhandled rejection ends it.
    const suffix = Math.random().toString(36).slice(2, 8);
    const database = `pce_types_${suffix}`;
    const role = `pce_types_${suffix}`;
    await sql.unsafe(`create database ${database}`);
    await sql.unsafe(`create role ${role} login`);
    const admin = new URL(SERVER_URL);
    admin.pathname = `/${database}`;
    const reader = new URL(admin);
    reader.username = role;
    const script = `
      import postgres from "postgres";
      const unhandled = [];
      process.on("unhandledRejection", (err) => unhandled.push(err?.code ?? String(err)));
      const admin = postgres(${JSON.stringify(admin.href)}, { max: 1, onnotice: () => {} });
      const reader = postgres(${JSON.stringify(reader.href)}, { max: 1, onnotice: () => {} });
      const code = (p) => p.then(() => "ok", (err) => err.code);
      await admin\`revoke select on pg_catalog.pg_type from public\`;
      const first = await code(reader\`select 1 as x\`);
      const second = await code(reader\`select 2 as x\`);
      const reserving = await code(reader.reserve());
      await admin\`grant select on pg_catalog.pg_type to public\`;
      const reserved = await Promise.race([reader.reserve(), Bun.sleep(3000).then(() => undefined)]);
      const onReserved = reserved ? (await reserved\`select array['r', 's']::text[] as a\`)[0].a : "pending";
      reserved?.release();
      const array = (await reader\`select array['a', 'b']::text[] as a\`)[0].a;
      await Bun.sleep(100);
      console.log(JSON.stringify({ first, second, reserving, onReserved, array, unhandled }));
      await Promise.all([admin.end(), reader.end()]);`;
    try {
      const child = Bun.spawn([process.execPath, "-e", script], { cwd: import.meta.dir, stdout: "pipe", stderr: "pipe" });
      const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
      expect({ code, out: out.trim(), err: err.slice(0, 400) }).toEqual({
        code: 0,
        // 42501: permission denied for table pg_type; the session without its types was not handed out.
        out: JSON.stringify({ first: "42501", second: "42501", reserving: "42501", onReserved: ["r", "s"], array: ["a", "b"], unhandled: [] }),
        err: "",
      });
    } finally {
      await sql.unsafe(`drop database if exists ${database} with (force)`);
      await sql.unsafe(`drop role if exists ${role}`);
    }
  }, 30_000);

  test("a cancel request that cannot connect (new connections refused, this one alive) is no unhandled rejection", async () => {
    // Query.cancel() dropped the cancel request's promise: ECONNREFUSED ended the process. The
    // service cancels a read whose client left, whatever the network does to new connections.
    const target = new URL(SERVER_URL);
    const script = `
      import net from "node:net";
      import postgres from "postgres";
      const unhandled = [];
      process.on("unhandledRejection", (err) => unhandled.push(err?.code ?? String(err)));
      // A proxy to the server that takes no new connection once the pool has its one.
      const proxy = net.createServer((client) => {
        const upstream = net.connect(${Number(target.port || 5432)}, ${JSON.stringify(target.hostname)});
        client.pipe(upstream).pipe(client);
        client.on("error", () => {});
        upstream.on("error", () => {});
      });
      await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      const url = new URL(${JSON.stringify(SERVER_URL)});
      url.hostname = "127.0.0.1";
      url.port = String(proxy.address().port);
      const sql = postgres(url.href, { max: 1, onnotice: () => {} });
      await sql\`select 1\`;
      proxy.close();
      const query = sql\`select pg_sleep(0.5) as slept\`;
      const outcome = query.then(() => "ran", (err) => err.code);
      await Bun.sleep(200);
      query.cancel();
      const result = await outcome;
      await Bun.sleep(300);
      console.log(JSON.stringify({ result, unhandled }));
      process.exit(0);`;
    const child = Bun.spawn([process.execPath, "-e", script], { cwd: import.meta.dir, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    // The statement runs to its end (the cancel never reached the server), and nothing is unhandled.
    expect({ code, out: out.trim(), err: err.slice(0, 400) }).toEqual({ code: 0, out: JSON.stringify({ result: "ran", unhandled: [] }), err: "" });
  }, 15_000);

  // A read's snapshot is a reserved connection (src/reads/read.ts, issue 52): these three are what
  // a reservation met when its session was killed under it.
  test("a reserved connection that closed: its release leaves the pool sound, and queries on it fail, also those queued behind a cursor", async () => {
    // Before: the release put the closed connection among the open ones; the pool's next
    // queries failed CONNECTION_CLOSED on it and the next reserve() never resolved. A query
    // queued behind the cursor when the session died was never settled (a read's rollback hung).
    const name = `pce-reserved-${process.pid}`;
    const pool = postgres(SERVER_URL, { max: 2, onnotice: () => {}, connection: { application_name: name } });
    try {
      await pool`select 1`;
      const outcomes: string[] = [];
      for (let round = 0; round < 2; round++) {
        const reserved = await pool.reserve();
        await reserved`begin`;
        const cursor = reserved`select g from generate_series(1, 100000) g`.cursor(100, () => new Promise(() => {})); // suspended for ever
        const cursorOutcome = within(cursor, 3000);
        await Bun.sleep(100);
        const queued = within(reserved`rollback`, 3000); // behind the suspended cursor
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`;
        outcomes.push((await cursorOutcome).split(":")[0]!, (await queued).split(":")[0]!);
        await Bun.sleep(100); // the socket's close, after its error
        reserved.release();
        outcomes.push((await within(reserved`select 1`, 3000)).split(":")[0]!);
        const many = await Promise.all(Array.from({ length: 4 }, (_, i) => within(pool`select ${i}::int`, 3000)));
        outcomes.push(many.join(","), await within(pool.reserve().then((r) => r.release()), 3000));
      }
      const lost = expect.stringMatching(/^(ECONNRESET|CONNECTION_CLOSED|57P01)$/);
      expect(outcomes).toEqual(Array.from({ length: 2 }, () => [lost, lost, "CONNECTION_CLOSED", "resolved,resolved,resolved,resolved", "resolved"]).flat());
    } finally {
      await pool.end({ timeout: 0 });
    }
  });

  test("a cursor resumed after its session closed is no unhandled rejection", async () => {
    // The cursor's callback promise resolved after the connection closed: PortalSuspended read
    // the next query of null and threw, unhandled, and the process ended.
    const name = `pce-resumed-${process.pid}`;
    const script = `
      import postgres from "postgres";
      const unhandled = [];
      process.on("unhandledRejection", (err) => unhandled.push(String(err)));
      const admin = postgres(${JSON.stringify(SERVER_URL)}, { max: 1, onnotice: () => {} });
      const sql = postgres(${JSON.stringify(SERVER_URL)}, { max: 1, onnotice: () => {}, connection: { application_name: ${JSON.stringify(name)} } });
      let resume;
      const query = sql\`select g from generate_series(1, 100000) g\`.cursor(100, () => new Promise((r) => (resume = r)));
      const outcome = query.then(() => "ended", (err) => err.code);
      await Bun.sleep(200);
      await admin\`select pg_terminate_backend(pid) from pg_stat_activity where application_name = '${name}'\`;
      const failed = await outcome;
      await Bun.sleep(300); // the socket's close, after its error
      resume();
      await Bun.sleep(300);
      console.log(JSON.stringify({ failed: failed === "ECONNRESET" || failed === "CONNECTION_CLOSED", unhandled }));
      process.exit(0);`;
    const child = Bun.spawn([process.execPath, "-e", script], { cwd: import.meta.dir, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    expect({ code, out: out.trim(), err: err.slice(0, 400) }).toEqual({ code: 0, out: JSON.stringify({ failed: true, unhandled: [] }), err: "" });
  }, 15_000);

  test("as libpq, each new session of a pool tries the hosts from the first: a slot whose session ended goes back to the first host", async () => {
    // Before: a slot went on from the host after the one of its last session, so after a few
    // reconnects a pool of primary,standby held sessions on both (issue 52: the version read on
    // one, the rows on the other). Two hosts here: a proxy to the server that counts the
    // sessions it carries (the first host), and the server itself (the second).
    const name = `pce-hosts-${process.pid}`;
    const target = new URL(SERVER_URL);
    let proxied = 0;
    const proxy = Bun.listen<{ upstream?: Promise<import("bun").Socket> }>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(client) {
          proxied++;
          client.data = {
            upstream: Bun.connect({ hostname: target.hostname, port: Number(target.port || 5432), socket: { data: (_, bytes) => void client.write(bytes), close: () => void client.end() } }),
          };
        },
        data: (client, bytes) => void client.data.upstream?.then((up) => up.write(bytes)),
        close: (client) => void client.data.upstream?.then((up) => up.end()),
      },
    });
    // Two hosts, as a URL names them (postgres://user@host1:port1,host2:port2/db).
    const url = `postgres://${target.username}@127.0.0.1:${proxy.port},${target.hostname}:${target.port || 5432}${target.pathname}`;
    const pool = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: name } });
    try {
      const query = async (reserved: boolean) => {
        // The first queries after a session was ended may meet its end; the next one has a new session.
        for (let attempt = 0; ; attempt++) {
          try {
            if (!reserved) return await pool`select 1`;
            const session = await pool.reserve(); // a session opened for a reserve() (a read's snapshot) too
            await session`select 1`;
            return session.release();
          } catch (err) {
            if (attempt === 5) throw err;
          }
        }
      };
      for (let i = 0; i < 6; i++) {
        await query(i % 2 === 1);
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`;
      }
      expect(proxied).toBe(6);
    } finally {
      await pool.end({ timeout: 0 });
      proxy.stop(true);
    }
  });

  test("the package is the pinned version the patch was made for, and its build Bun loads is the one patched", () => {
    const root = join(import.meta.dir, "../../node_modules/postgres");
    expect(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version).toBe("3.4.9");
    expect(Bun.resolveSync("postgres", import.meta.dir)).toBe(join(root, "src/index.js"));
    const patched = readFileSync(join(root, "src/connection.js"), "utf8");
    for (const label of ["postgres.js #1119, #1181", "postgres.js #1193", "postgres.js #1174", "postgres.js #1208", "postgres.js #1215", "postgres.js #1192, #1205", "postgres.js: the connection closed while the cursor", "As libpq"]) expect(patched).toContain(label);
    const index = readFileSync(join(root, "src/index.js"), "utf8");
    for (const label of ["postgres.js: the queries waiting on the reserved connection", "postgres.js: once the reserved connection closed"]) expect(index).toContain(label);
  });
});
