import { describe, expect, it } from 'vitest';
import {
  toolMetaForClients,
  unwrapViewUri,
  viewOf,
  viewUriProblem,
  wrapViewUri,
  MAX_VIEW_BYTES,
} from '../../../main/plugins/upstream/views.ts';
import { unwrapUri, wrapUri } from '../../../main/plugins/upstream/surface-names.ts';
import { definitionHash } from '../../../main/plugins/upstream/pinning.ts';

/** How MCP App views are named and cut down (main/plugins/upstream/views.ts; docs/upstreams.md, "MCP Apps"). */
describe('view names', () => {
  it('ui://<id>/ then the upstream’s own authority and path, both ways', () => {
    expect(wrapViewUri('app', 'ui://get-time/mcp-app.html')).toBe('ui://app/get-time/mcp-app.html');
    expect(unwrapViewUri('app', 'ui://app/get-time/mcp-app.html')).toBe('ui://get-time/mcp-app.html');
    expect(unwrapViewUri('app', 'ui://other/get-time/mcp-app.html')).toBeNull();
    expect(unwrapViewUri('app', 'ui://app/')).toBeNull();
    // the resource wrap follows: views keep ui://, the rest the gatehouse-upstream:// prefix
    expect(wrapUri('app', 'ui://x/y.html')).toBe('ui://app/x/y.html');
    expect(wrapUri('app', 'file:///a')).toBe('gatehouse-upstream://app/file:///a');
    expect(unwrapUri('app', 'ui://app/x/y.html')).toBe('ui://x/y.html');
    // a view URI that cannot be named stays behind the plain prefix (and is served by no view pin)
    expect(wrapUri('app', 'ui://a/../b')).toBe('gatehouse-upstream://app/ui://a/../b');
  });

  it.each([
    ['ui://a/b.html', null],
    ['ui://a/b.html?x=../y', null],
    ['https://a/b.html', 'a view URI starts with ui://'],
    ['ui://', 'a view URI names something after ui://'],
    ['ui://a/../b', 'a view URI may not hold . or .. segments'],
    ['ui://../b', 'a view URI may not hold . or .. segments'],
    ['ui://a/./b', 'a view URI may not hold . or .. segments'],
    ['ui://a\\..\\b', 'a view URI may not hold backslashes or encoded dots and slashes'],
    ['ui://a/%2E%2E/b', 'a view URI may not hold backslashes or encoded dots and slashes'],
    ['ui://a%2Fb', 'a view URI may not hold backslashes or encoded dots and slashes'],
    ['ui://a b', 'not a usable URI (1-2048 characters, no spaces or control characters)'],
  ])('%s: %s', (uri, problem) => expect(viewUriProblem(uri)).toBe(problem));
});

describe("a tool's _meta for clients", () => {
  const meta = { ui: { resourceUri: 'ui://v/x.html', visibility: ['app'] }, 'ui/resourceUri': 'ui://v/x.html', k: 1 };
  it('names the view inside the namespace when it is served, keeps the rest', () => {
    expect(toolMetaForClients('up', meta, () => true)).toEqual({
      ui: { resourceUri: 'ui://up/v/x.html', visibility: ['app'] },
      'ui/resourceUri': 'ui://up/v/x.html',
      k: 1,
    });
  });
  it('names no view while it is not served', () => {
    expect(toolMetaForClients('up', meta, () => false)).toEqual({ ui: { visibility: ['app'] }, k: 1 });
  });
  it('hashes only the ui part of a tool’s _meta', () => {
    const base = { name: 't', inputSchema: { type: 'object' } };
    expect(definitionHash({ ...base, _meta: { other: 1 } })).toBe(definitionHash(base));
    expect(definitionHash({ ...base, _meta: { ui: { visibility: ['app'] } } })).not.toBe(definitionHash(base));
  });
});

describe('a read as a view', () => {
  it('its bytes hashed, its asks from the listing overlaid by the content', () => {
    const r = viewOf(
      'ui://v/x.html',
      [{ uri: 'ui://v/x.html', mimeType: 'text/html;profile=mcp-app', text: '<p>', _meta: { ui: { a: 2 } } }],
      { a: 1, b: 1 },
    );
    expect(r).toMatchObject({ view: { name: 'ui://v/x.html', ui: { a: 2, b: 1 }, size: 3, text: '<p>' } });
  });
  it('a blob is measured decoded; over the bound is no view', () => {
    const big = Buffer.alloc(MAX_VIEW_BYTES + 1).toString('base64');
    expect(viewOf('ui://v/x.html', [{ uri: 'ui://v/x.html', blob: big }], undefined)).toEqual({
      problem: 'the view is 4.0 MiB, more than the 4 MiB a view may be',
      // so it is not read again at every listing (upstream-views.ts)
      oversized: true,
    });
  });
});
