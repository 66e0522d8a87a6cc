/**
 * Whether what a call must write can be persisted now. Each part (the audit
 * log, the usage outbox) knows whether its last write failed and can try
 * again; a call asks before it runs, so nothing metered runs unrecorded
 * (docs/architecture.md "One tool call"; decisions.md "Storage
 * failures"). The healthy path costs one look per part; only a part that
 * failed is probed (it retries what it holds in memory).
 */
export interface StorageFault {
  /** which part refused: 'audit' | 'usage outbox' */
  part: string;
  /** the error as the OS said it (ENOSPC, EIO, ...), with no path beyond the data dir's own files */
  error: string;
  /** when the part first refused a write in this run of failures */
  since: string;
}

export interface StoragePart {
  /** the failure now, as last seen, without writing */
  fault(): StorageFault | null;
  /** writes what it holds again; resolves with the failure that is left, or null */
  probe(): Promise<StorageFault | null>;
}

export class StorageGuard {
  private last: StorageFault | null = null;

  constructor(
    private readonly parts: readonly StoragePart[],
    /** the disk began or stopped refusing (the console and the tray reload the health report) */
    private readonly onChange: () => void = () => {},
  ) {}

  /** The first part that refuses writes, as last seen (the health report, the tray). */
  fault(): StorageFault | null {
    for (const p of this.parts) {
      const f = p.fault();
      if (f) return f;
    }
    return null;
  }

  /** Before a call runs, and on a timer: null when every part takes writes (a failed one is probed first). */
  async ready(): Promise<StorageFault | null> {
    let left: StorageFault | null = null;
    for (const p of this.parts) {
      if (p.fault()) left = await p.probe();
      if (left) break;
    }
    left ??= this.fault();
    if ((left === null) !== (this.last === null)) {
      this.last = left;
      this.onChange();
    }
    return left;
  }
}

/** The words the agent, the console and the tray read. */
export const storageMessage = (f: StorageFault): string =>
  `the disk refuses writes (${f.part}: ${f.error}, since ${f.since}): Gatehouse cannot record this call's ${f.part === 'audit' ? 'audit entry' : 'usage'}, so it did not run; free space on the disk that holds the data dir and try again`;
