import { decodePathPart } from './url.ts';

/** Path parameters by name (null prototype: a parameter called `__proto__` is just a name). */
export type Params = Record<string, string>;

export type RouteMatch<H> = { handler: H; params: Params } | { handler?: undefined; allow: string[] } | null;

interface Dynamic<H> {
  method: string;
  /** literal segments, ':name' params, and '*' (the rest, possibly empty) last */
  segments: string[];
  handler: H;
}

const ANY = '*';

/**
 * A route table: method + path, with `:name` segments and a trailing `*` for
 * the rest of the path (in params['*'], still percent-encoded: it is a path
 * to route further or to decode with decodePathPart). Static paths are one
 * map lookup; patterns are tried in the order they were added. A path that
 * matches only under other methods gives `{allow}` so the caller can answer
 * 405 (or keep an older answer). `:name` parameters are percent-decoded; a
 * malformed escape is a 400 HttpError, never a URIError.
 */
export class Router<H> {
  private readonly statics = new Map<string, Map<string, H>>();
  private readonly patterns: Dynamic<H>[] = [];

  /** `method` is an HTTP method, a list of them, or '*' for any. */
  on(method: string | readonly string[], path: string, handler: H): this {
    for (const m of typeof method === 'string' ? [method] : method) {
      const verb = m.toUpperCase();
      if (!path.includes(':') && !path.includes('*')) {
        let byMethod = this.statics.get(path);
        if (!byMethod) this.statics.set(path, (byMethod = new Map()));
        if (byMethod.has(verb)) throw new Error(`route ${verb} ${path} is defined twice`);
        byMethod.set(verb, handler);
      } else {
        const segments = path.split('/');
        if (segments.indexOf('*') !== -1 && segments.indexOf('*') !== segments.length - 1)
          throw new Error(`route ${path}: '*' must be the last segment`);
        this.patterns.push({ method: verb, segments, handler });
      }
    }
    return this;
  }

  get(path: string, handler: H): this {
    return this.on('GET', path, handler);
  }

  post(path: string, handler: H): this {
    return this.on('POST', path, handler);
  }

  match(method: string, path: string): RouteMatch<H> {
    const verb = method.toUpperCase();
    const allow = new Set<string>();
    const byMethod = this.statics.get(path);
    if (byMethod) {
      const h = byMethod.get(verb) ?? byMethod.get(ANY);
      if (h !== undefined) return { handler: h, params: Object.create(null) as Params };
      for (const m of byMethod.keys()) allow.add(m);
    }
    let parts: string[] | undefined;
    for (const route of this.patterns) {
      parts ??= path.split('/');
      const params = matchSegments(route.segments, parts);
      if (!params) continue;
      if (route.method === verb || route.method === ANY)
        return { handler: route.handler, params: decodeParams(params) };
      allow.add(route.method);
    }
    return allow.size > 0 ? { allow: [...allow] } : null;
  }
}

function matchSegments(pattern: string[], parts: string[]): Params | null {
  const params = Object.create(null) as Params;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p === '*') {
      if (parts.length < pattern.length) return null; // '/a/*' needs the slash: '/a' is not under it
      params['*'] = parts.slice(i).join('/');
      return params;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (p.startsWith(':')) {
      if (part === '') return null;
      params[p.slice(1)] = part;
    } else if (p !== part) return null;
  }
  return parts.length === pattern.length ? params : null;
}

function decodeParams(raw: Params): Params {
  for (const k of Object.keys(raw)) if (k !== '*') raw[k] = decodePathPart(raw[k]!);
  return raw;
}
