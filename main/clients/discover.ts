import {
  CLIENT_IDS,
  CLIENT_LABELS,
  clientLocations,
  type ClientId,
  type ClientLocation,
  type PlaceOf,
} from '../contract/client-locations.ts';
import { isObject, readConfig, valueAt, type ConfigText } from './config-file.ts';
import { readEntry, type ReadEntry } from './server-entries.ts';

/**
 * What `gatehouse clients list` shows: for each client, each of its config
 * locations that exists, the servers in it and whether each already goes
 * through Gatehouse (it is Gatehouse's own entry, or it was imported into an
 * upstream that still exists).
 */

export interface FoundServer extends ReadEntry {
  name: string;
  /** the upstream it was imported as, while that upstream exists */
  imported_as: string | null;
}

export interface FoundLocation extends ClientLocation {
  /** an error reading or parsing the file (named, with its line) */
  error: string | null;
  servers: FoundServer[];
}

export interface ClientReport {
  client: ClientId;
  label: string;
  locations: FoundLocation[];
}

/** Looks an entry up in the record of earlier imports: the upstream id, or null. */
export type ImportedAs = (l: ClientLocation, name: string) => string | null;

/** The servers of one location in a file already read. */
export function serversAt(l: ClientLocation, config: ConfigText, importedAs: ImportedAs): FoundServer[] {
  const servers = valueAt(config.doc, l.path);
  if (!isObject(servers)) return [];
  return Object.entries(servers).map(([name, raw]) => ({
    name,
    ...readEntry(l.client, raw),
    imported_as: importedAs(l, name),
  }));
}

export async function discoverClient(client: ClientId, place: PlaceOf, importedAs: ImportedAs): Promise<ClientReport> {
  const locations: FoundLocation[] = [];
  for (const l of clientLocations(client, place)) {
    try {
      const config = await readConfig(l.file, l.format);
      if (!config) continue;
      const servers = valueAt(config.doc, l.path);
      // Claude Code's local scope exists only for projects it has seen: no entry, nothing to show.
      if (servers === undefined && l.scope === 'local') continue;
      if (servers !== undefined && !isObject(servers)) {
        locations.push({ ...l, error: `"${l.path.join('.')}" in ${l.file} is not an object`, servers: [] });
        continue;
      }
      locations.push({ ...l, error: null, servers: serversAt(l, config, importedAs) });
    } catch (e) {
      locations.push({ ...l, error: (e as Error).message, servers: [] });
    }
  }
  return { client, label: CLIENT_LABELS[client], locations };
}

export async function discoverAll(place: PlaceOf, importedAs: ImportedAs): Promise<ClientReport[]> {
  const out: ClientReport[] = [];
  for (const c of CLIENT_IDS) out.push(await discoverClient(c, place, importedAs));
  return out;
}
