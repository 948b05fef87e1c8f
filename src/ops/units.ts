// The systemd units printed by `product-cost-export systemd-unit [service|refresh|refresh-timer]`
// (and installed by the .deb): the service as a dynamic, unprivileged user in a read-only
// file system, its key file and other secrets copied to it by a privileged step at each start
// and reload (so they stay readable by root alone, and rotate without a restart), telling
// systemd when it is ready; and the refresh (a oneshot with the same sandbox and a database
// URL of its own, one that may write the rollup tables) with the timer that runs it every
// minute. Fixed text apart from the executable's path.

export const CONFIG_DIRECTORY = "/etc/product-cost-export";
/** Under /run: where the service reads the files of CONFIG_DIRECTORY (stage-files copies them). */
export const RUNTIME_DIRECTORY = "product-cost-export";

/** The files stage-files copies: the name under CONFIG_DIRECTORY → the name the service reads in its runtime directory. */
export const STAGED_FILES: readonly [source: string, staged: string][] = [
  ["api-keys", "product-cost-api-keys"],
  ["database-url", "database-url"],
  ["refresh-database-url", "refresh-database-url"],
  ["tls-cert.pem", "tls-cert"],
  ["tls-key.pem", "tls-key"],
  // A client certificate for PostgreSQL (the URL's sslcert and sslkey): private as the rest.
  ["db-client-cert.pem", "db-client-cert"],
  ["db-client-key.pem", "db-client-key"],
];

/**
 * For a file the service reads from a copy stage-files made (in /run/product-cost-export, or
 * the unit's credentials directory), the words that name the operator's file to fix; else "".
 * An error naming only the copy sent operators to a directory they never write.
 */
export function copyOf(path: string, credentialsDirectory = process.env.CREDENTIALS_DIRECTORY): string {
  const slash = path.lastIndexOf("/");
  const [directory, name] = [path.slice(0, slash), path.slice(slash + 1)];
  if (directory !== `/run/${RUNTIME_DIRECTORY}` && directory !== credentialsDirectory) return "";
  const source = STAGED_FILES.find(([, staged]) => staged === name)?.[0];
  return source ? ` (a copy of ${CONFIG_DIRECTORY}/${source}, made at each start: fix or put that file there)` : "";
}
/** Where an operator installs the bare executable (the .deb installs /usr/bin/product-cost-export). */
export const DEFAULT_INSTALL_PATH = "/usr/local/bin/product-cost-export";

/** Where each unit points `systemctl help` and `systemctl status`: the manual page (`man-page`) and the README the .deb installs. */
export const DOCUMENTATION = "Documentation=man:product-cost-export(1) file:/usr/share/doc/product-cost-export/README.md";

export const UNIT_KINDS = ["service", "refresh", "refresh-timer"] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];

// What both services run under: a dynamic unprivileged user, a read-only system, no devices,
// no capabilities, only the system calls of an ordinary service.
const SANDBOX = `DynamicUser=yes
UMask=0077
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
ProcSubset=pid
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RemoveIPC=yes
LockPersonality=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
# A call outside the list fails with EPERM instead of killing the service.
SystemCallErrorNumber=EPERM
`;

export function systemdUnit(kind: UnitKind, execPath: string): string {
  if (kind === "refresh") return refreshUnit(execPath);
  if (kind === "refresh-timer") return refreshTimer();
  return serviceUnit(execPath);
}

function serviceUnit(execPath: string): string {
  const runtime = `%t/${RUNTIME_DIRECTORY}`;
  return `# product-cost-export.service, printed by \`product-cost-export systemd-unit\` (the .deb installs it).
#   ${CONFIG_DIRECTORY}/env       DATABASE_URL=... and other settings (see --help), mode 0600
#   ${CONFIG_DIRECTORY}/api-keys  one key or sha256:<hex> digest per line, mode 0600
# Rotate keys: edit api-keys, then \`systemctl reload product-cost-export\` (no restart).
[Unit]
Description=product-cost-export: read-only product cost API
${DOCUMENTATION}
After=network-online.target postgresql.service
Wants=network-online.target
# Not started before it is configured: the package installs the unit before the operator writes env.
ConditionPathExists=${CONFIG_DIRECTORY}/env

[Service]
# Ready (systemctl start returns) once it answers requests; STOPPING and RELOADING as they happen.
Type=notify
NotifyAccess=main
# The files of ${CONFIG_DIRECTORY} (root's alone) the service reads: api-keys, database-url,
# refresh-database-url, tls-cert.pem, tls-key.pem, db-client-cert.pem, db-client-key.pem.
# A privileged step copies them into the
# service's own runtime directory at every start and every reload, readable by its dynamic user
# alone, where it reads them as credentials (LoadCredential= copies at start only: a reload
# would re-read the old keys).
RuntimeDirectory=${RUNTIME_DIRECTORY}
RuntimeDirectoryMode=0700
Environment=CREDENTIALS_DIRECTORY=${runtime}
ExecStartPre=+${execPath} stage-files
ExecStart=${execPath} serve
ExecReload=+${execPath} stage-files --reload $MAINPID
EnvironmentFile=${CONFIG_DIRECTORY}/env
# To keep the database password out of env: the URL alone in ${CONFIG_DIRECTORY}/database-url.
# To let the service fold changes into the rollup itself (no refresh timer): the owner's URL in
# ${CONFIG_DIRECTORY}/refresh-database-url.
# HTTPS: tls-cert.pem and tls-key.pem under ${CONFIG_DIRECTORY}/, and in its env (no drop-in
# needed): TLS_CERT_FILE=/run/${RUNTIME_DIRECTORY}/tls-cert and TLS_KEY_FILE=/run/${RUNTIME_DIRECTORY}/tls-key
Restart=on-failure
RestartSec=2
# Exit code 2 is bad configuration: restarting would fail the same way.
RestartPreventExitStatus=2
# SIGTERM drains requests in flight for up to SHUTDOWN_TIMEOUT_MS (default 10 s).
KillSignal=SIGTERM
TimeoutStopSec=30

${SANDBOX}# No MemoryDenyWriteExecute=: the JavaScript JIT needs writable executable memory.
# A port below 1024 (e.g. PORT=443): set CapabilityBoundingSet=CAP_NET_BIND_SERVICE and
# AmbientCapabilities=CAP_NET_BIND_SERVICE instead of the empty set below.
CapabilityBoundingSet=
# The embedded database with --data-dir: StateDirectory=product-cost-export and DATA_DIR=/var/lib/product-cost-export
LimitNOFILE=65536

[Install]
WantedBy=multi-user.target
`;
}

function refreshUnit(execPath: string): string {
  return `# product-cost-export-refresh.service, printed by \`product-cost-export systemd-unit refresh\`.
# Folds what the ETL wrote into the rollup, so that reads stay fast; reads are exact without it.
# Install beside the service, with the timer (\`product-cost-export systemd-unit refresh-timer\`):
#   product-cost-export systemd-unit refresh > /etc/systemd/system/product-cost-export-refresh.service
#   product-cost-export systemd-unit refresh-timer > /etc/systemd/system/product-cost-export-refresh.timer
#   systemctl daemon-reload && systemctl enable --now product-cost-export-refresh.timer
#   ${CONFIG_DIRECTORY}/refresh.env  DATABASE_URL of a role that may write the rollup tables
#                                    (the tables' owner, as for migrate), mode 0600
[Unit]
Description=product-cost-export: fold the cost change log into the rollup
${DOCUMENTATION}
After=network-online.target postgresql.service
Wants=network-online.target
# Not run before it is configured.
ConditionPathExists=${CONFIG_DIRECTORY}/refresh.env

[Service]
Type=oneshot
ExecStart=${execPath} refresh
EnvironmentFile=${CONFIG_DIRECTORY}/refresh.env
# A first refresh after a bulk load can take a minute or more; the next run waits for it.
TimeoutStartSec=1h

${SANDBOX}CapabilityBoundingSet=
`;
}

function refreshTimer(): string {
  return `# product-cost-export-refresh.timer, printed by \`product-cost-export systemd-unit refresh-timer\`.
# Runs product-cost-export-refresh.service a minute after each run ends (never two at once).
[Unit]
Description=product-cost-export: refresh the rollup every minute
${DOCUMENTATION}

[Timer]
OnBootSec=1min
OnUnitInactiveSec=1min
AccuracySec=5s

[Install]
WantedBy=timers.target
`;
}
