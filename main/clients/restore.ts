import { readFile } from 'node:fs/promises';
import type { ApiDispatch } from '../contract/api.ts';
import { CLIENT_LABELS, type ClientId } from '../contract/client-locations.ts';
import { GatehouseError } from '../core/errors.ts';
import { writeIfUnchanged } from './checked-write.ts';
import { readState, updateState, type ConnectRecord } from './clients-state.ts';
import { isObject, parseConfig, readConfig, valueAt, valueHash, type ConfigText } from './config-file.ts';
import { setJsoncEntry } from './edit-jsonc.ts';
import { spliceTable, tomlTableRange } from './edit-toml.ts';

/**
 * `gatehouse clients restore CLIENT` undoes `connect`. A file still exactly as
 * connect left it gets its old bytes back, byte for byte. A file the client
 * has changed since keeps those changes: only Gatehouse's entry is taken out
 * (when it is still the one connect wrote) and each original entry is put
 * back where no entry of that name has appeared since. The upstreams stay.
 */

export interface RestoredFile {
  file: string;
  /** 'bytes': the backup put back as it was; 'entries': merged into the client's newer file */
  how: 'bytes' | 'entries';
  put_back: string[];
  /** what was left as the client has it now, with why */
  kept: string[];
}

export interface RestoreDeps {
  dataDir: string;
  dispatch: ApiDispatch;
  beforeWrite?: (file: string) => Promise<void>;
}

/** The merged text for a file the client changed since connect. */
function mergedText(
  now: ConfigText,
  backupText: string,
  c: ConnectRecord,
): Omit<RestoredFile, 'file' | 'how'> & { text: string } {
  const before = parseConfig(backupText, c.format, c.backup);
  let text = now.text;
  const put_back: string[] = [];
  const kept: string[] = [];
  for (const place of c.places) {
    const servers = valueAt(parseConfig(text, c.format, c.file), place.path);
    const has = (n: string) => isObject(servers) && Object.hasOwn(servers, n);
    if (has(c.entry_name)) {
      if (valueHash((servers as Record<string, unknown>)[c.entry_name]) === c.entry_hash) {
        text =
          c.format === 'jsonc'
            ? setJsoncEntry(text, place.path, c.entry_name, undefined)
            : cutToml(text, place.path, c.entry_name);
      } else kept.push(`${c.entry_name} (changed since connect)`);
    }
    for (const n of place.removed) {
      if (has(n)) {
        kept.push(`${n} (the client has an entry of that name now)`);
        continue;
      }
      const original = valueAt(before, [...place.path, n]);
      if (original === undefined) continue;
      if (c.format === 'jsonc') text = setJsoncEntry(text, place.path, n, original);
      else {
        const r = tomlTableRange(backupText, place.path, n);
        if (!r) continue;
        text = spliceTable(text, text.length, backupText.slice(r.start, r.end).replace(/\s*$/, '\n'));
      }
      put_back.push(n);
    }
  }
  return { text, put_back, kept };
}

function cutToml(text: string, path: string[], name: string): string {
  const r = tomlTableRange(text, path, name);
  return r ? text.slice(0, r.start) + text.slice(r.end) : text;
}

export async function restoreClient(client: ClientId, deps: RestoreDeps): Promise<RestoredFile[]> {
  const state = await readState(deps.dataDir);
  const mine = state.connections.filter((c) => c.client === client);
  if (!mine.length)
    throw new GatehouseError(
      'not_found',
      `${CLIENT_LABELS[client]} is not connected through Gatehouse: nothing to restore`,
    );
  const out: RestoredFile[] = [];
  for (const c of mine.reverse()) {
    const backupText = await readFile(c.backup, 'utf8').catch(() => {
      throw new GatehouseError('not_found', `the backup of ${c.file} (${c.backup}) is gone; nothing was changed`);
    });
    const now = await readConfig(c.file, c.format);
    if (!now) throw new GatehouseError('not_found', `${c.file} is gone; its backup is ${c.backup}`);
    let done: RestoredFile;
    if (now.hash === c.hash_after) {
      await deps.beforeWrite?.(c.file);
      await writeIfUnchanged(deps.dataDir, now, backupText);
      done = { file: c.file, how: 'bytes', put_back: c.places.flatMap((p) => p.removed), kept: [] };
    } else {
      const merged = mergedText(now, backupText, c);
      await deps.beforeWrite?.(c.file);
      if (merged.text !== now.text) await writeIfUnchanged(deps.dataDir, now, merged.text);
      done = { file: c.file, how: 'entries', put_back: merged.put_back, kept: merged.kept };
    }
    await updateState(deps.dataDir, (s) => {
      s.connections = s.connections.filter((x) => !(x.client === c.client && x.file === c.file && x.at === c.at));
    });
    out.push(done);
  }
  // The token connect made, once no connected file uses it any more.
  const left = (await readState(deps.dataDir)).connections;
  for (const id of new Set(mine.map((c) => c.token_id).filter((t): t is string => !!t)))
    if (!left.some((c) => c.token_id === id)) await deps.dispatch('tokens.revoke', { id });
  return out;
}
