// Imported first by main.ts, because libraries read NODE_ENV as they load. Elysia builds a
// readable, costly message for every validation failure unless it is "production" (a 422
// took 76 µs instead of 51 in process); the executable is the production build, so it says
// so, unless whoever runs it set another value. The bytes of every answer are the same.
process.env.NODE_ENV ??= "production";
