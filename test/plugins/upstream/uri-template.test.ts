import { describe, expect, it } from 'vitest';
import { matchesTemplate } from '../../../main/plugins/upstream/uri-template.ts';

describe('matchesTemplate', () => {
  it.each([
    ['demo://resource/dynamic/text/{id}', 'demo://resource/dynamic/text/7', true],
    ['demo://resource/dynamic/text/{id}', 'demo://resource/dynamic/text/7/../../secret', false],
    ['demo://resource/dynamic/text/{id}', 'demo://resource/dynamic/blob/7', false],
    ['file:///notes/{+path}', 'file:///notes/a/b/c.md', true],
    ['file:///notes/{+path}', 'file:///etc/passwd', false],
    ['repo://{owner}/{name}{/path}', 'repo://me/site/docs/readme', true],
    ['repo://{owner}/{name}{/path}', 'repo://me/site', true],
    ['search://q{?term,limit}', 'search://q?term=a&limit=3', true],
    ['search://q{?term,limit}', 'search://qx', false],
    ['doc://{name}{.ext}', 'doc://readme.md', true],
    ['broken://{a', 'broken://{a', false],
  ])('%s ~ %s: %s', (template, uri, expected) => {
    expect(matchesTemplate(template, uri)).toBe(expected);
  });

  // The template is the upstream's: as regex stars, 50 adjacent expressions would backtrack for longer than the test's
  // timeout on this URI; walked position by position it is 50 x 4000 steps.
  it('answers for many adjacent expressions and a long URI that does not match', () => {
    expect(matchesTemplate(`x://${'{a}'.repeat(50)}!`, `x://${'a'.repeat(4000)}`)).toBe(false);
    expect(matchesTemplate(`x://${'{a}'.repeat(50)}!`, `x://${'a'.repeat(4000)}!`)).toBe(true);
  });
});
