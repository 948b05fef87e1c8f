// CORS_ALLOWED_ORIGINS read (src/edge/cors.ts answers by it): checked with the other settings,
// so that a typo stops the start instead of leaving a dashboard refused without a word.

// A serialized origin (RFC 6454 §6.1): scheme, host, and a port only when it is not the default.
const ORIGIN = /^(https?):\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

/** CORS_ALLOWED_ORIGINS's entries, or the problems with them (config.ts names the setting): `*` (any origin) or origins as a browser writes them. */
export function parseCorsOrigins(setting: string): { origins: ReadonlySet<string> | "*"; problems: string[] } {
  const entries = setting.split(",").map((e) => e.trim()).filter(Boolean);
  if (entries.length === 1 && entries[0] === "*") return { origins: "*", problems: [] };
  const problems: string[] = [];
  const origins = new Set<string>();
  for (const entry of entries) {
    const m = ORIGIN.exec(entry);
    const port = m?.[3];
    const defaultPort = (m?.[1] === "https" && port === "443") || (m?.[1] === "http" && port === "80");
    if (!m || (port !== undefined && (Number(port) > 65535 || defaultPort))) {
      problems.push(
        `entry ${JSON.stringify(entry)} is not an origin as a browser sends it: scheme://host[:port], lowercase, no path, no default port (https://dash.example.com), or * alone`,
      );
    } else origins.add(entry);
  }
  return { origins, problems };
}
