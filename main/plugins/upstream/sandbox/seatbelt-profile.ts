/**
 * The macOS Seatbelt profile (SBPL) for one confined server, run as
 * `sandbox-exec -p PROFILE -- COMMAND ARGS...`. Pure text, unit-tested as
 * such (there is no macOS to run it on here). The shape follows
 * @anthropic-ai/sandbox-runtime's generator, with one change that matters:
 * reads are an allowlist too (`deny default`, then the system, the runtime,
 * the package, the grants and the upstream's own HOME and temp), so `~/.ssh`
 * and the data dir are denied without being named. Outbound network only to
 * this child's own proxy port on loopback.
 */

export interface SeatbeltPlan {
  /** the runtime's and the package's folders */
  readOnly: readonly string[];
  read: readonly string[];
  write: readonly string[];
  /** the upstream's own HOME and temp folder (HOME and TMPDIR point there) */
  privateDirs: readonly string[];
  /** the loopback port of this child's proxy, or null: no network at all */
  proxyPort: number | null;
}

/** What any macOS program needs to start: the OS's own folders, devices, the dyld cache. */
export const MACOS_SYSTEM_READ = [
  '/System',
  '/usr',
  '/bin',
  '/sbin',
  '/Library/Apple',
  '/Library/Frameworks',
  '/private/etc',
  '/private/var/db/timezone',
  '/private/var/db/dyld',
  '/dev',
  '/opt/homebrew',
  '/usr/local',
] as const;

/** A string literal of SBPL: backslash and double quote escaped; control characters are refused before this (SandboxPath). */
export const sbplString = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

const subpaths = (paths: readonly string[]) => paths.map((p) => `  (subpath ${sbplString(p)})`).join('\n');

export function seatbeltProfile(plan: SeatbeltPlan): string {
  const readable = [...MACOS_SYSTEM_READ, ...plan.readOnly, ...plan.read, ...plan.write, ...plan.privateDirs];
  const writable = [...plan.write, ...plan.privateDirs];
  return [
    '(version 1)',
    '(deny default)',
    '(allow process-exec)',
    '(allow process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow ipc-posix-shm)',
    // The root itself and the folders on the way to a readable one (a stat, not their contents).
    '(allow file-read-metadata)',
    '(allow file-read*',
    '  (literal "/")',
    subpaths(readable),
    ')',
    '(allow file-write*',
    '  (literal "/dev/null")',
    '  (literal "/dev/tty")',
    ...(writable.length ? [subpaths(writable)] : []),
    ')',
    ...(plan.proxyPort !== null
      ? [`(allow network-outbound (remote tcp "localhost:${plan.proxyPort}"))`]
      : ['; no network: no grant']),
    '',
  ].join('\n');
}
