import { createHash } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-write.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * What lets a large store open without validating its whole document again (upstreams.json holds every pinned
 * tool definition: 5.6 MB and ~200 ms of schema parsing at 5,000 tools, on the path to ready and in every CLI
 * command without a service). `.<file>.digest` beside it (hidden, apart from the file's backups) names the SHA-256
 * of the text this program last wrote there and the schema that text was valid under. A file whose text has that
 * digest, read under the same schema, is exactly what we validated and wrote: it is parsed as JSON and taken as it is.
 *
 * Anything else is validated in full, as before: a file edited by hand or by another program, one cut short, one
 * written by a version whose schema differs, a digest written before a kill cut the file's own write (the digest
 * is written after the file, so a kill between them leaves an old digest that no longer matches). The digest is a
 * check against our own mistakes and a torn disk, not against someone who can write the data dir: they could write
 * any valid document anyway.
 */
export interface TrustedDigest {
  /** true when `raw` is the text we last wrote under this schema */
  matches(raw: string): Promise<boolean>;
  /** `text` is what the file now holds, written by us or validated in full and exactly as we would write it */
  wrote(text: string): Promise<void>;
}

const Digest = lazySchema(() => z.object({ sha256: z.string(), schema: z.string() }));

const fingerprints = new WeakMap<z.ZodType, string | null>();

/**
 * The schema's shape as JSON Schema, hashed: it changes when a field, a type or a default does. Null when zod
 * cannot describe the schema: then nothing is trusted and every open validates, as without a digest.
 */
export function schemaFingerprint(schema: z.ZodType): string | null {
  if (!fingerprints.has(schema)) {
    let fp: string | null = null;
    try {
      const shape = JSON.stringify(z.toJSONSchema(schema, { unrepresentable: 'any', io: 'output' }));
      fp = createHash('sha256').update(shape).digest('hex');
    } catch {
      // left null
    }
    fingerprints.set(schema, fp);
  }
  return fingerprints.get(schema) ?? null;
}

/** JSON text: `{ [name]: fingerprint }` */
declare const __GATEHOUSE_SCHEMA_FINGERPRINTS__: string | undefined;

/**
 * What the build computed with schemaFingerprint for the stores' schemas it knows by name (main/cli/build.ts
 * `builtFingerprints`): the same hash, without building the schema and converting it at every open (~15 ms of a
 * CLI command without a service; a trusted open needs nothing else of the schema). Empty when running from source.
 */
const built: Readonly<Record<string, string>> =
  typeof __GATEHOUSE_SCHEMA_FINGERPRINTS__ === 'undefined'
    ? {}
    : (JSON.parse(__GATEHOUSE_SCHEMA_FINGERPRINTS__) as Record<string, string>);

/** `.upstreams.json.digest` for `upstreams.json` */
export const digestFileOf = (file: string) => join(dirname(file), `.${basename(file)}.digest`);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** `name`: the schema's name in the build's fingerprints, when it has one there. */
export function trustedDigest(file: string, schema: z.ZodType, name?: string): TrustedDigest {
  const digestFile = digestFileOf(file);
  const fingerprint = () =>
    name !== undefined && Object.hasOwn(built, name) ? built[name]! : schemaFingerprint(schema);
  const write = async (text: string) => {
    const current = fingerprint();
    try {
      if (current === null) throw new Error('a schema zod cannot describe: nothing is trusted');
      await writeFileAtomic(digestFile, `${JSON.stringify({ sha256: sha256(text), schema: current })}\n`, {
        mode: 0o600,
      });
    } catch {
      // Without a current digest the next open validates in full: remove a stale one so it cannot match by chance.
      await unlink(digestFile).catch(() => undefined);
    }
  };
  return {
    async matches(raw) {
      let text: string;
      try {
        text = await readFile(digestFile, 'utf8');
      } catch {
        return false;
      }
      let parsed: z.infer<typeof Digest>;
      try {
        parsed = Digest.parse(JSON.parse(text));
      } catch {
        return false;
      }
      const current = fingerprint();
      return current !== null && parsed.schema === current && parsed.sha256 === sha256(raw);
    },
    wrote: write,
  };
}
