/**
 * Semantic version precedence (semver.org section 11), for versions that
 * passed the contract's ReleaseVersion: numbers compare as numbers, a
 * pre-release sorts before its release, build metadata is ignored.
 * Shared (pure, domain-free): the reference gateway orders its releases with
 * it, and the app's cloud client and desktop updater offer only a release
 * newer than the running version with it.
 */
export function compareVersions(a: string, b: string): number {
  const [coreA, preA] = split(a);
  const [coreB, preB] = split(b);
  for (let i = 0; i < 3; i++) if (coreA[i] !== coreB[i]) return coreA[i]! < coreB[i]! ? -1 : 1;
  if (!preA.length || !preB.length) return preA.length === preB.length ? 0 : preA.length ? -1 : 1;
  for (let i = 0; i < Math.min(preA.length, preB.length); i++) {
    const c = compareIdentifier(preA[i]!, preB[i]!);
    if (c) return c;
  }
  return Math.sign(preA.length - preB.length);
}

function split(v: string): [number[], string[]] {
  const noBuild = v.split('+')[0]!;
  const dash = noBuild.indexOf('-');
  const core = (dash === -1 ? noBuild : noBuild.slice(0, dash)).split('.').map(Number);
  return [core, dash === -1 ? [] : noBuild.slice(dash + 1).split('.')];
}

function compareIdentifier(x: string, y: string): number {
  const nx = /^\d+$/.test(x);
  const ny = /^\d+$/.test(y);
  if (nx && ny) return Math.sign(Number(x) - Number(y));
  if (nx !== ny) return nx ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

export const newestFirst = <T extends { version: string }>(xs: readonly T[]): T[] =>
  [...xs].sort((p, q) => compareVersions(q.version, p.version));
