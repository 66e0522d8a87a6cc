import { stat, unlink } from 'node:fs/promises';
import type { ApiDispatch } from '../contract/api.ts';
import type { BridgeLaunch } from '../contract/client-config.ts';
import type { Result } from '../contract/errors.ts';
import { CLIENT_LABELS, clientLocations, type ClientId, type PlaceOf } from '../contract/client-locations.ts';
import { GatehouseError } from '../core/errors.ts';
import { writeIfUnchanged } from './checked-write.ts';
import { readState, updateState, writeBackup, type ConnectRecord, type ImportRecord } from './clients-state.ts';
import { isObject, readConfig, sha256, valueAt, valueHash, type ConfigText } from './config-file.ts';
import { setJsoncEntry } from './edit-jsonc.ts';
import { requireTableRange, spliceTable, tomlTable, tomlTableRange } from './edit-toml.ts';
import { gatehouseEntry, speaksHttp, type GatehouseAccess } from './gatehouse-entry.ts';
import { readEntry } from './server-entries.ts';

/**
 * `gatehouse clients connect CLIENT`: in each file of the client that held
 * imported servers, those entries are replaced by one Gatehouse entry; the
 * entries that were not imported stay as they were, and so does every other
 * byte of the file. The file as it was is copied to the data dir first
 * (0600), and the write is refused if the client changed the file meanwhile.
 */

export interface ConnectDeps {
  dataDir: string;
  dispatch: ApiDispatch;
  place: PlaceOf;
  /** the gateway's MCP endpoint */
  mcpUrl: string;
  /** how a client starts gatehouse-bridge here, and the vault its token goes to (Claude Desktop) */
  launch: BridgeLaunch;
  vault: 'keychain' | 'file' | 'auto';
  now?: Date;
  /** tests only: runs after a file is read and before it is written */
  beforeWrite?: (file: string) => Promise<void>;
}

export interface ConnectedFile {
  file: string;
  backup: string;
  entry_name: string;
  removed: string[];
  /** the file may be read by other users and now holds a token */
  readable_by_others: boolean;
}

export interface ConnectResult {
  client: ClientId;
  files: ConnectedFile[];
  /** files left alone, with why */
  skipped: Array<{ file: string; why: string }>;
  token_id: string | null;
}

export const CLAUDE_DESKTOP_ACCOUNT = 'clients-claude-desktop';
const DEFAULT_NAME = 'gatehouse';

function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new GatehouseError(r.code, r.message);
  return r.data;
}

/** `gatehouse`, or `gatehouse-2`... when a server of that name that is not Gatehouse is in one of the places. */
function entryName(client: ClientId, doc: Record<string, unknown>, paths: string[][]): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? DEFAULT_NAME : `${DEFAULT_NAME}-${n}`;
    const clash = paths.some((p) => {
      const servers = valueAt(doc, p);
      return isObject(servers) && Object.hasOwn(servers, name) && !readEntry(client, servers[name]).gatehouse;
    });
    if (!clash) return name;
  }
}

/** The file's new text: each place loses its imported entries and gains Gatehouse's. */
export function connectedText(
  config: ConfigText,
  format: 'jsonc' | 'toml',
  places: Array<{ path: string[]; removed: string[] }>,
  name: string,
  entry: Record<string, unknown>,
): string {
  if (format === 'jsonc') {
    let text = config.text;
    for (const p of places) {
      for (const n of p.removed) text = setJsoncEntry(text, p.path, n, undefined);
      text = setJsoncEntry(text, p.path, name, entry);
    }
    return text;
  }
  let text = config.text;
  for (const p of places) {
    const ranges = p.removed.map((n) => requireTableRange(text, p.path, n, config.file));
    const old = tomlTableRange(text, p.path, name);
    if (old) ranges.push(old);
    ranges.sort((a, b) => b.start - a.start);
    for (const r of ranges) text = text.slice(0, r.start) + text.slice(r.end);
    const at = ranges.length ? ranges[ranges.length - 1]!.start : text.length;
    text = spliceTable(text, at, tomlTable(p.path, name, entry, text.includes('\r\n') ? '\r\n' : '\n'));
  }
  return text;
}

export async function connectClient(client: ClientId, deps: ConnectDeps): Promise<ConnectResult> {
  const label = CLIENT_LABELS[client];
  const state = await readState(deps.dataDir);
  const upstreams = new Set(unwrap(await deps.dispatch('upstreams.list', {})).map((u) => u.id));
  const records = state.imports.filter((r) => r.client === client && upstreams.has(r.upstream));
  if (!records.length)
    throw new GatehouseError(
      'not_found',
      `nothing of ${label} is imported into Gatehouse yet: gatehouse clients import ${client} first`,
    );
  const byFile = new Map<string, ImportRecord[]>();
  for (const r of records) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);

  const result: ConnectResult = { client, files: [], skipped: [], token_id: null };
  let access: GatehouseAccess | null = null;
  const accessFor = async (): Promise<GatehouseAccess> => {
    if (access) return access;
    const created = unwrap(
      await deps.dispatch('tokens.create', {
        label: `${label} (gatehouse clients connect)`,
        ...(speaksHttp(client) ? {} : { keychain_account: CLAUDE_DESKTOP_ACCOUNT }),
      }),
    );
    result.token_id = created.record.id;
    access = speaksHttp(client)
      ? { kind: 'http', url: deps.mcpUrl, token: created.token }
      : { kind: 'bridge', launch: deps.launch, account: CLAUDE_DESKTOP_ACCOUNT, vault: deps.vault };
    return access;
  };

  const locations = clientLocations(client, deps.place);
  for (const [file, recs] of byFile) {
    const where = locations.find((l) => l.file === file);
    const format = where?.format ?? (file.endsWith('.toml') ? 'toml' : 'jsonc');
    if (where?.readOnly) {
      result.skipped.push({ file, why: 'it is managed by an administrator (read-only to Gatehouse)' });
      continue;
    }
    if (state.connections.some((c) => c.client === client && c.file === file)) {
      result.skipped.push({ file, why: `connected already (gatehouse clients restore ${client} first)` });
      continue;
    }
    const config = await readConfig(file, format);
    if (!config) {
      result.skipped.push({ file, why: 'the file is gone' });
      continue;
    }
    const paths = [...new Map(recs.map((r) => [r.path.join('\0'), r.path])).values()];
    const places = paths
      .map((path) => {
        const servers = valueAt(config.doc, path);
        const removed = recs
          .filter((r) => r.path.join('\0') === path.join('\0'))
          .map((r) => r.name)
          .filter((n) => isObject(servers) && Object.hasOwn(servers, n));
        return { path, removed };
      })
      .filter((p) => p.removed.length);
    if (!places.length) {
      result.skipped.push({ file, why: 'the imported servers are no longer in it' });
      continue;
    }
    const name = entryName(
      client,
      config.doc,
      places.map((p) => p.path),
    );
    const entry = gatehouseEntry(client, await accessFor());
    const text = connectedText(config, format, places, name, entry);
    const now = deps.now ?? new Date();
    const backup = await writeBackup(deps.dataDir, client, config.text, now);
    try {
      await deps.beforeWrite?.(file);
      await writeIfUnchanged(deps.dataDir, config, text);
    } catch (e) {
      await unlink(backup).catch(() => undefined);
      if (!result.files.length && result.token_id)
        await deps.dispatch('tokens.revoke', { id: result.token_id }).catch(() => undefined);
      throw e;
    }
    const record: ConnectRecord = {
      client,
      file,
      real: config.real,
      format,
      backup,
      hash_after: sha256(text),
      entry_name: name,
      entry_hash: valueHash(entry),
      places,
      token_id: result.token_id,
      at: now.toISOString(),
    };
    await updateState(deps.dataDir, (s) => void s.connections.push(record));
    const mode = (await stat(config.real)).mode & 0o777;
    result.files.push({
      file,
      backup,
      entry_name: name,
      removed: places.flatMap((p) => p.removed),
      readable_by_others: speaksHttp(client) && (mode & 0o077) !== 0,
    });
  }
  return result;
}
