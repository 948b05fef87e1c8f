// The seed of a randomised test: SEED=<n> from the environment replays a run; without it a
// fresh seed is drawn, so every run explores new cases. Printed either way, so a failure
// seen once (in CI, say) can be replayed exactly.

export function testSeed(name: string): number {
  const given = process.env.SEED;
  const seed = given !== undefined && given !== "" ? Number(given) : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isSafeInteger(seed)) throw new Error(`SEED must be a whole number, got ${JSON.stringify(given)}`);
  console.log(`${name}: seed ${seed} (replay with SEED=${seed})`);
  return seed;
}
