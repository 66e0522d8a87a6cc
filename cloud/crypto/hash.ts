import { createHash, randomBytes } from 'node:crypto';

export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
export const sha256Base64 = (data: Buffer): string => createHash('sha256').update(data).digest('base64');

/** A secret shown once: prefix + base64url of `bytes` random bytes. */
export const newSecret = (prefix: string, bytes: number): string =>
  `${prefix}${randomBytes(bytes).toString('base64url')}`;

/** What lists show of a secret: its prefix and last 4 characters. */
export const previewOf = (secret: string): string => `${secret.slice(0, 4)}…${secret.slice(-4)}`;
