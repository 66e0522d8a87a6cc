import type { Logger } from '../../main/lib/logger.ts';
import type { Db } from '../db/db.ts';
import type { SecretBox } from '../crypto/master-key.ts';
import type { KeyRing } from './key-ring.ts';
import type { BreakerBoard } from '../ai/routing/breaker.ts';
import type { RequestLog } from './request-log.ts';
import type { ConfigCache } from './config-cache.ts';

/** What every service function works with; built once by the composition root (cloud/service.ts). */
/** Per-instance AI state and limits (breakers are an optimisation, so each instance keeps its own). */
export interface AiRuntime {
  breakers: BreakerBoard;
  /** where provider keys are read, by the variable names the registry holds */
  env: Record<string, string | undefined>;
  /** one provider call, answer included */
  hopTimeoutMs: number;
  /** the whole generation, every fallback included (below the client's own 120 s) */
  deadlineMs: number;
  /** aborted when a stopping service's drain is over: a provider call still in flight is cut, so its hold is released before the database closes */
  halt?: AbortSignal;
}

export interface Ctx {
  db: Db;
  box: SecretBox;
  keys: KeyRing;
  now: () => Date;
  log: Logger;
  ai: AiRuntime;
  /** where published release files are kept (shared by every instance of a deployment) */
  releasesDir: string;
  /** runs cloud tasks (agency reports) on this instance: reports-service.ts's TaskRunner */
  tasks: TaskQueue;
  /** the request log, written in batches */
  requestLog: RequestLog;
  /** configuration kept while its version holds (see config-cache.ts) */
  cache: ConfigCache;
}

/** What the services need of the task runner (an interface here, so context.ts imports no service: no import cycle). */
export interface TaskQueue {
  /** after a task is queued and from housekeeping */
  kick(): void;
  /** abandoned tasks fail, expired ones go, anything runnable runs */
  housekeep(): Promise<void>;
  /** resolves when nothing runs (before the service stops) */
  idle(): Promise<void>;
}
