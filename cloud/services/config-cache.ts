/**
 * What an instance keeps of slowly changing configuration (the AI registry
 * and policies, stored limits): an entry is used only while the version the
 * request read with its site (config_versions, bumped in the transaction of
 * any change) is the one it was loaded under, so no request sees a change
 * later than the database says it happened. Without a version (a request
 * not read through the hot path) it is read every time. Bounded: the least
 * recently used entry goes when it is full.
 */
export class ConfigCache {
  private readonly entries = new Map<string, { version: number; value: unknown }>();
  constructor(private readonly max = 10_000) {}

  async get<T>(key: string, version: number | undefined, load: () => Promise<T>): Promise<T> {
    if (version === undefined) return load();
    const hit = this.entries.get(key);
    if (hit && hit.version === version) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value as T;
    }
    const value = await load();
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { version, value });
    return value;
  }
}
