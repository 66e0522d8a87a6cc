import type { Db } from '../db/db.ts';
import type { SecretBox } from '../crypto/master-key.ts';
import type { KeyRing } from './key-ring.ts';

/** What every service function works with; built once by the composition root (cloud/service.ts). */
export interface CloudLogger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface Ctx {
  db: Db;
  box: SecretBox;
  keys: KeyRing;
  now: () => Date;
  log: CloudLogger;
}
