import { describe, expect, it } from 'vitest';
import { compactDiff } from '../../../main/lib/line-diff.ts';
import { diffLines } from '../../../main/contract/line-diff.ts';
import { parseMarkdown } from '../../../main/plugins/site/markdown.ts';
import { readability, sentences, syllablesDe, syllablesEn } from '../../../main/plugins/site/readability.ts';
import { classifyLink } from '../../../main/plugins/site/seo-links.ts';
import { countPhrase, slugify, terms, truncate } from '../../../main/plugins/site/text.ts';

describe('markdown', () => {
  it('reads headings, paragraphs, list items, quotes and links, and skips code', () => {
    const md = [
      '# Title #',
      '',
      'First **bold** para',
      'continues [here](/x/ "t").',
      '',
      '## Sub',
      '- item *one*',
      '- item [two](https://e.com)',
      '',
      '> quoted',
      '> more',
      '',
      '```',
      '# not a heading [no](/code/)',
      '```',
      '',
      '![img](/i.png)',
      '',
      '---',
      'After <https://auto.example/x>',
    ].join('\n');
    const p = parseMarkdown(md);
    expect(p.headings).toEqual([
      { level: 1, text: 'Title', line: 1 },
      { level: 2, text: 'Sub', line: 6 },
    ]);
    expect(p.firstParagraph).toBe('First bold para continues here.');
    expect(p.blocks.map((b) => b.type)).toEqual([
      'heading',
      'paragraph',
      'heading',
      'list_item',
      'list_item',
      'quote',
      'paragraph',
      'paragraph',
    ]);
    expect(p.blocks.find((b) => b.type === 'quote')?.text).toBe('quoted more');
    expect(p.links.map((l) => l.href)).toEqual(['/x/', 'https://e.com', 'https://auto.example/x']);
    expect(p.plainText).not.toContain('not a heading');
    expect(p.bodyText).not.toContain('Title');
  });

  it('accepts CRLF and text without any structure', () => {
    expect(parseMarkdown('Just text.\r\nMore.').firstParagraph).toBe('Just text. More.');
    expect(parseMarkdown('').blocks).toEqual([]);
  });
});

describe('text helpers', () => {
  it('slugifies with German transliteration and a length limit', () => {
    expect(slugify('Über uns')).toBe('ueber-uns');
    expect(slugify('Straße & Café — 2026!')).toBe('strasse-cafe-2026');
    expect(slugify("Don't panic")).toBe('dont-panic');
    expect(slugify('a'.repeat(50) + ' ' + 'b'.repeat(60))).toBe('a'.repeat(50));
    expect(slugify('!!!')).toBe('');
  });

  it('folds case and accents for matching, and counts whole-word phrases', () => {
    expect(terms('Über Café-Crème')).toEqual(['uber', 'cafe', 'creme']);
    expect(countPhrase(terms('pour-over coffee, pour over coffee; pour overcoffee'), terms('pour over coffee'))).toBe(
      2,
    );
    expect(truncate('one two three four', 12)).toBe('one two…');
  });

  it('classifies links against the site address', () => {
    const site = 'https://shop.example/blog/';
    const kind = (href: string) => classifyLink({ text: '', href }, site);
    expect(kind('/coffees/')).toMatchObject({ kind: 'internal', slug: 'coffees' });
    expect(kind('https://SHOP.example/blog/de/ueber-uns/?a=1#x')).toMatchObject({
      kind: 'internal',
      slug: 'ueber-uns',
    });
    expect(kind('https://shop.example/blog/')).toMatchObject({ kind: 'internal', slug: '' });
    expect(kind('https://other.example/')).toMatchObject({ kind: 'external' });
    expect(kind('mailto:a@b.c').kind).toBe('other');
    expect(kind('#top').kind).toBe('other');
  });
});

describe('readability', () => {
  it('counts syllables well enough on common words', () => {
    expect(['coffee', 'water', 'the', 'beautiful', 'roasted', 'make'].map(syllablesEn)).toEqual([2, 2, 1, 3, 1, 1]);
    expect(['Kaffee', 'Rösterei', 'Bohnen', 'frei'].map(syllablesDe)).toEqual([2, 3, 2, 1]);
  });

  it('splits sentences and scores easy text higher than hard text', () => {
    expect(sentences('One. Two words! Three? four\nFive')).toEqual(['One.', 'Two words!', 'Three? four', 'Five']);
    const easy = readability(
      'The cat sat on the mat. It was warm. The sun was out. We had tea and cake. It was a good day. '.repeat(3),
      'en',
    );
    const hard = readability(
      'Comprehensive methodological considerations notwithstanding, organoleptic evaluations demonstrate substantial variability. '.repeat(
        5,
      ),
      'en',
    );
    expect(easy.available && hard.available).toBe(true);
    expect(easy.score!).toBeGreaterThan(90);
    expect(hard.score!).toBeLessThan(10);
    expect(easy.band).toBe('very easy');
  });

  it('says why when it cannot score', () => {
    expect(readability('Too short.', 'en')).toMatchObject({
      available: false,
      reason: expect.stringMatching(/too little text/),
    });
    expect(readability('word '.repeat(100), 'ja')).toMatchObject({
      available: false,
      method: null,
      reason: expect.stringContaining('"ja"'),
    });
  });
});

describe('line diff', () => {
  it('finds the changed lines', () => {
    const ops = diffLines('a\nb\nc\nd', 'a\nB\nc\nd\ne');
    expect(ops.map((o) => `${o.op}${o.text}`)).toEqual([' a', '-b', '+B', ' c', ' d', '+e']);
  });

  it('shows only hunks with context, numbered, and caps the size', () => {
    const before = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n');
    const after = before.replace('line 50\n', 'line fifty\n').replace('line 150\n', '');
    const d = compactDiff(before, after);
    expect(d.changed_lines).toBe(3);
    expect(d.before).toBe(
      '@@ line 49 @@\n  line 49\n- line 50\n  line 51\n@@ line 149 @@\n  line 149\n- line 150\n  line 151',
    );
    expect(d.after).toBe('@@ line 49 @@\n  line 49\n+ line fifty\n  line 51\n@@ line 149 @@\n  line 149\n  line 151');
    const big = compactDiff(before, before.replace(/line/g, 'row'), { maxLines: 10 });
    expect(big.after.split('\n').length).toBeLessThan(15);
    expect(big.after).toMatch(/more changed line\(s\) not shown$/);
  });
});
