import { describe, expect, it } from 'vitest';
import { analyzePage, type AnalyzeOptions, type SeoReport } from '../../../main/plugins/site/seo-analyze.ts';
import type { Page } from '../../../main/plugins/site/site-data.ts';
import { pageOf } from './site-fixture.ts';

const SIMPLE = [
  'You only need a jar, a sieve and some time.',
  'Mix the grounds with cold water and stir well.',
  'Leave the jar in the fridge for one night.',
  'In the morning, pour it through a fine filter.',
  'It keeps for a week if you close the jar.',
  'Add milk or ice if you like it that way.',
  'A coarse grind works best for this method.',
  'Use one part coffee to eight parts water.',
];
const filler = (n: number) => Array.from({ length: n }, (_, i) => SIMPLE[i % SIMPLE.length]).join(' ');

/** A page that passes every check: the baseline each test breaks one rule of. */
const GOOD_CONTENT = `# Cold brew coffee at home

Cold brew coffee is the easiest summer drink you can make. ${filler(6)}

## Why cold brew coffee tastes sweet

${filler(10)} See [our beans](/coffees/) for a good match.

### What you need

${filler(10)} The [SCA](https://sca.coffee/) has more on water.

## How long to steep

${filler(8)} Cold brew coffee needs about twelve hours.
`;

const good = (over: Partial<Page> = {}): Page =>
  pageOf({
    id: 10,
    slug: 'cold-brew-coffee',
    title: 'Cold brew coffee',
    seo_title: 'Cold Brew Coffee at Home: An Easy Recipe for Summer Days', // 55
    seo_description:
      'Make cold brew coffee at home with a jar, a sieve and one night in the fridge. Our easy recipe, the right grind and how long it keeps.', // ~135
    focus_keyword: 'cold brew coffee',
    content: GOOD_CONTENT,
    ...over,
  });

const opts: AnalyzeOptions = {
  siteUrl: 'https://northbank-coffee.example/',
  siteName: 'Northbank',
  slugs: new Map([
    ['coffees', 'publish'],
    ['coffee-subscriptions', 'draft'],
    ['cold-brew-coffee', 'publish'],
  ]),
};

const finding = (r: SeoReport, id: string) => r.findings.find((f) => f.id === id);
const severity = (r: SeoReport, id: string) => finding(r, id)?.severity;

describe('the baseline page', () => {
  it('passes every check with a full score, and each finding has nothing to fix', () => {
    const r = analyzePage(good(), opts);
    expect(r.findings.filter((f) => f.severity !== 'good')).toEqual([]);
    expect(r.score).toBe(100);
    expect(r.findings.every((f) => f.fix === null)).toBe(true);
    expect(r.metrics.seo_title_length).toBe(good().seo_title.length);
    expect(r.outline.map((h) => `${h.level}:${h.text}`)).toEqual([
      '1:Cold brew coffee at home',
      '2:Why cold brew coffee tastes sweet',
      '3:What you need',
      '2:How long to steep',
    ]);
    expect(r.links.internal.map((l) => l.slug)).toEqual(['coffees']);
    expect(r.links.external.map((l) => l.href)).toEqual(['https://sca.coffee/']);
    expect(r.readability).toMatchObject({ available: true, method: 'flesch-reading-ease' });
  });

  it('is deterministic', () => {
    expect(analyzePage(good(), opts)).toEqual(analyzePage(good(), opts));
  });
});

describe('each rule fails with a concrete fix', () => {
  it('SEO title length: short, long, far off, and the page-title fallback', () => {
    const short = analyzePage(good({ seo_title: 'Cold brew coffee recipe for summer' }), opts); // 34
    expect(finding(short, 'seo_title_length')).toMatchObject({
      severity: 'improve',
      fix: expect.stringMatching(/adding 16-26 characters/),
    });
    const long = analyzePage(
      good({ seo_title: 'Cold Brew Coffee at Home: An Easy Recipe for Long Summer Days!' }),
      opts,
    ); // 62
    expect(finding(long, 'seo_title_length')).toMatchObject({
      severity: 'improve',
      fix: expect.stringMatching(/remove 2 or more characters/),
    });
    expect(severity(analyzePage(good({ seo_title: 'Cold brew coffee' }), opts), 'seo_title_length')).toBe('problem');
    expect(
      severity(analyzePage(good({ seo_title: `Cold brew coffee ${'x'.repeat(60)}` }), opts), 'seo_title_length'),
    ).toBe('problem');
    const fallback = analyzePage(good({ seo_title: '' }), opts);
    expect(finding(fallback, 'seo_title_length')).toMatchObject({
      severity: 'problem',
      message: expect.stringMatching(/page title is used/),
      fix: expect.stringContaining('"Cold brew coffee | Northbank"'),
    });
    expect(fallback.metrics.seo_title).toBe('Cold brew coffee');
  });

  it('meta description: missing, short, long', () => {
    expect(
      finding(
        analyzePage(good({ seo_description: '', excerpt: 'Cold brew in a jar.' }), opts),
        'meta_description_length',
      ),
    ).toMatchObject({ severity: 'problem', fix: expect.stringContaining('Cold brew in a jar.') });
    expect(severity(analyzePage(good({ seo_description: 'x'.repeat(100) }), opts), 'meta_description_length')).toBe(
      'improve',
    );
    expect(severity(analyzePage(good({ seo_description: 'x'.repeat(40) }), opts), 'meta_description_length')).toBe(
      'problem',
    );
    expect(
      finding(analyzePage(good({ seo_description: 'x'.repeat(175) }), opts), 'meta_description_length'),
    ).toMatchObject({ severity: 'improve', fix: expect.stringMatching(/Shorten seo_description by at least 15/) });
    expect(severity(analyzePage(good({ seo_description: 'x'.repeat(260) }), opts), 'meta_description_length')).toBe(
      'problem',
    );
  });

  it('no focus keyword: one finding instead of the keyword checks', () => {
    const r = analyzePage(good({ focus_keyword: '' }), opts);
    expect(severity(r, 'focus_keyword')).toBe('improve');
    expect(finding(r, 'keyword_in_seo_title')).toBeUndefined();
    expect(finding(r, 'keyword_density')).toBeUndefined();
  });

  it('focus keyword in the SEO title', () => {
    const r = analyzePage(good({ seo_title: 'Iced Coffee Made Simple: An Easy Recipe for Summer Days' }), opts);
    expect(finding(r, 'keyword_in_seo_title')).toMatchObject({
      severity: 'problem',
      fix: expect.stringContaining('"cold brew coffee"'),
    });
  });

  it('focus keyword in the first paragraph', () => {
    const r = analyzePage(
      good({ content: GOOD_CONTENT.replace('Cold brew coffee is the easiest', 'This is the easiest') }),
      opts,
    );
    expect(severity(r, 'keyword_in_first_paragraph')).toBe('improve');
  });

  it('focus keyword in an H2 or H3 (an H1 does not count)', () => {
    const r = analyzePage(
      good({ content: GOOD_CONTENT.replace('## Why cold brew coffee tastes sweet', '## Why it tastes sweet') }),
      opts,
    );
    expect(finding(r, 'keyword_in_subheading')).toMatchObject({
      severity: 'improve',
      fix: expect.stringContaining('"Why it tastes sweet"'),
    });
  });

  it('focus keyword in the slug, ignoring stop words and accents', () => {
    expect(finding(analyzePage(good({ slug: 'summer-drinks' }), opts), 'keyword_in_slug')).toMatchObject({
      severity: 'improve',
      fix: expect.stringContaining('"cold-brew-coffee"'),
    });
    expect(severity(analyzePage(good({ slug: 'cold-brew-coffee-recipe' }), opts), 'keyword_in_slug')).toBe('good');
    const de = analyzePage(good({ language: 'de', focus_keyword: 'Kaffee für Büros', slug: 'kaffee-bueros' }), opts);
    expect(severity(de, 'keyword_in_slug')).toBe('good');
  });

  it('keyword density: too low, too high', () => {
    const low = analyzePage(good({ focus_keyword: 'twelve hours' }), opts);
    expect(finding(low, 'keyword_density')).toMatchObject({
      severity: 'improve',
      fix: expect.stringMatching(/about \d+ more time/),
    });
    expect(low.metrics.keyword_density).toBeLessThan(0.5);
    const stuffed = analyzePage(good({ content: `${GOOD_CONTENT}\n${'Cold brew coffee. '.repeat(40)}` }), opts);
    expect(finding(stuffed, 'keyword_density')).toMatchObject({
      severity: 'problem',
      message: expect.stringMatching(/keyword stuffing/),
    });
    expect(stuffed.metrics.keyword_density).toBeGreaterThan(3);
  });

  it('heading outline: missing H1, several H1, skipped levels', () => {
    expect(
      severity(analyzePage(good({ content: GOOD_CONTENT.replace('# Cold brew coffee at home\n', '') }), opts), 'h1'),
    ).toBe('problem');
    const two = analyzePage(good({ content: `${GOOD_CONTENT}\n# Another title\n\nMore.` }), opts);
    expect(finding(two, 'h1')).toMatchObject({
      severity: 'problem',
      message: expect.stringMatching(/2 H1 headings \(lines 1, \d+\)/),
    });
    const skip = analyzePage(
      good({
        content: GOOD_CONTENT.replace('## Why cold brew coffee tastes sweet', '### Why cold brew coffee tastes sweet'),
      }),
      opts,
    );
    expect(finding(skip, 'heading_levels')).toMatchObject({
      severity: 'improve',
      message: expect.stringContaining('H1 -> H3'),
    });
  });

  it('links: no internal links, broken ones, links to drafts, no external links', () => {
    const none = analyzePage(good({ content: GOOD_CONTENT.replace('[our beans](/coffees/)', 'our beans') }), opts);
    expect(severity(none, 'internal_links')).toBe('improve');
    const broken = analyzePage(
      good({
        content: `${GOOD_CONTENT}\nAlso [this](/no-such-page/) and [that](https://northbank-coffee.example/coffee-subscriptions/).`,
      }),
      opts,
    );
    expect(finding(broken, 'broken_internal_links')).toMatchObject({
      severity: 'problem',
      message: expect.stringContaining('/no-such-page/'),
    });
    expect(finding(broken, 'links_to_drafts')).toMatchObject({ severity: 'improve' });
    expect(broken.links.internal).toHaveLength(3); // an absolute URL on the site's host is internal too
    const noExternal = analyzePage(good({ content: GOOD_CONTENT.replace('[SCA](https://sca.coffee/)', 'SCA') }), opts);
    expect(severity(noExternal, 'external_links')).toBe('improve');
    const other = analyzePage(
      good({ content: `${GOOD_CONTENT}\n[mail](mailto:hi@example.com) [top](#top) ![photo](/img/a.jpg)` }),
      opts,
    );
    expect(other.links.internal).toHaveLength(1);
    expect(other.links.external).toHaveLength(1);
  });

  it('readability: hard text is flagged, other languages are honestly not scored', () => {
    const hard =
      'Notwithstanding considerable methodological heterogeneity, comprehensive organoleptic evaluations systematically demonstrate that extraction characteristics substantially influence perceived acidity, sweetness and bitterness in immersion-based preparations, particularly regarding temperature-dependent solubility of aromatic compounds.';
    const r = analyzePage(
      good({
        content: GOOD_CONTENT.replace(/^(Cold brew coffee is the easiest.*)$/m, `Cold brew coffee. ${hard}`).replace(
          /^(You only need.*)$/gm,
          hard,
        ),
      }),
      opts,
    );
    expect(finding(r, 'readability')).toMatchObject({
      severity: 'problem',
      fix: expect.stringMatching(/split long sentences|shorter, everyday/),
    });
    const fr = analyzePage(good({ language: 'fr' }), opts);
    expect(finding(fr, 'readability')).toBeUndefined();
    expect(fr.readability).toMatchObject({ available: false, score: null, reason: expect.stringContaining('"fr"') });
    const de = analyzePage(
      good({
        language: 'de',
        content:
          '# Kalt\n\nDer Kaffee ist gut. Wir rösten ihn selbst. Er schmeckt süß und mild. Trinken Sie ihn kalt oder warm. Die Bohnen kommen aus Kolumbien und Äthiopien. So einfach ist das.',
      }),
      opts,
    );
    expect(de.readability).toMatchObject({ available: true, method: 'flesch-amstad' });
  });

  it('content length: short pages are flagged', () => {
    const r = analyzePage(
      good({
        content:
          '# Cold brew coffee\n\nCold brew coffee is easy. See [beans](/coffees/) and [SCA](https://sca.coffee/).',
      }),
      opts,
    );
    expect(finding(r, 'content_length')).toMatchObject({
      severity: 'problem',
      fix: expect.stringMatching(/at least 300 words/),
    });
  });

  it('scores good as 1, improve as 0.5, problem as 0', () => {
    const r = analyzePage(good({ seo_description: '' }), opts);
    const n = r.findings.length;
    expect(r.score).toBe(Math.round(((n - 1) / n) * 100));
  });

  it("checks against a keyword passed in instead of the page's own", () => {
    const r = analyzePage(good(), { ...opts, focusKeyword: 'iced latte' });
    expect(r.focus_keyword).toBe('iced latte');
    expect(severity(r, 'keyword_in_seo_title')).toBe('problem');
  });
});
