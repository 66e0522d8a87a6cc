import type { Viewer, ProfileSet } from './registry.ts';
import { NAMESPACE_SEPARATOR } from '../../contract/upstreams.ts';

/**
 * Whether a token may use an upstream at all: the rule of Registry.isVisible
 * asked of the upstream rather than of one tool, so it holds while the
 * upstream lists nothing yet (not connected, not signed in). Every upstream
 * tool needs `use_upstreams`; the token's scope and its profile must leave
 * room for the upstream's plugin or for one of its namespaced tools.
 */
export function mayUseUpstream(
  viewer: Viewer,
  id: string,
  profileOf: (name: string) => ProfileSet | undefined,
): boolean {
  if (!viewer.capabilities.has('use_upstreams')) return false;
  const prefix = `${id}${NAMESPACE_SEPARATOR}`;
  const names = (tools: readonly string[]) => tools.some((t) => t.startsWith(prefix));
  const scope = viewer.scope;
  if (!scope) return true;
  if (scope.plugins && !scope.plugins.includes(id)) return false;
  if (scope.tools && !names(scope.tools)) return false;
  if (scope.profile !== undefined) {
    const profile = profileOf(scope.profile);
    if (!profile || !(profile.upstreams.includes(id) || names(profile.tools))) return false;
  }
  return true;
}

/**
 * One spelling per remote URL, so `--remote` matches what `upstreams add
 * --url` stored however either was written: the WHATWG form (scheme and host
 * lower case, default port dropped), no fragment, no trailing slash on the
 * path. Null for anything that is not an http(s) URL.
 */
export function remoteUrlKey(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  if (u.pathname.length > 1) u.pathname = u.pathname.replace(/\/+$/, '') || '/';
  return u.href;
}
