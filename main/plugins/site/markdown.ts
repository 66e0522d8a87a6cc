/**
 * Just enough Markdown for the SEO and search tools: block structure
 * (headings, paragraphs, list items, quotes), links and plain text. Page
 * content follows the subset documented in README.md; anything outside it
 * (tables, raw HTML) is read as plain paragraph text rather than rejected.
 */

export interface Heading {
  level: number;
  text: string;
  /** 1-based line number in the content */
  line: number;
}

export interface Link {
  text: string;
  href: string;
}

export type Block =
  | { type: 'heading'; level: number; text: string; line: number }
  | { type: 'paragraph' | 'list_item' | 'quote'; text: string; line: number };

export interface ParsedContent {
  blocks: Block[];
  headings: Heading[];
  links: Link[];
  /** text of the first paragraph (not heading, not list item), '' when none */
  firstParagraph: string;
  /** all block text, headings included, one block per line */
  plainText: string;
  /** paragraph, list and quote text only: what readers read as prose */
  bodyText: string;
}

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(```|~~~)/;
const LIST_ITEM = /^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const QUOTE = /^ {0,3}>[ \t]?(.*)$/;
const RULE = /^ {0,3}(?:[-*_][ \t]*){3,}$/;

// [text](href "title") but not ![alt](src)
const INLINE_LINK = /(!?)\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+["'][^"']*["'])?\s*\)/g;
const AUTOLINK = /<((?:https?|mailto):[^>\s]+)>/g;

/** Strip inline Markdown so only the words a reader sees remain. */
export function inlineText(md: string): string {
  return md
    .replace(INLINE_LINK, '$2')
    .replace(AUTOLINK, (_m, url: string) => url)
    .replace(/<\/?[a-zA-Z][^>]*>/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(\*|_)(.+?)\1/g, '$2')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!>])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

function inlineLinks(md: string): Link[] {
  const links: Link[] = [];
  for (const m of md.matchAll(INLINE_LINK)) {
    if (m[1]) continue;
    links.push({ text: inlineText(m[2] ?? ''), href: m[3] ?? '' });
  }
  for (const m of md.matchAll(AUTOLINK)) links.push({ text: m[1] ?? '', href: m[1] ?? '' });
  return links;
}

export function parseMarkdown(content: string): ParsedContent {
  const lines = content.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  const links: Link[] = [];
  let para: string[] = [];
  let paraLine = 0;
  let paraType: 'paragraph' | 'list_item' | 'quote' = 'paragraph';
  let inFence = false;

  const flush = () => {
    if (para.length) {
      const raw = para.join(' ');
      links.push(...inlineLinks(raw));
      const text = inlineText(raw);
      if (text) blocks.push({ type: paraType, text, line: paraLine });
    }
    para = [];
  };
  const start = (type: typeof paraType, text: string, line: number) => {
    flush();
    paraType = type;
    paraLine = line;
    para.push(text);
  };

  lines.forEach((line, i) => {
    const n = i + 1;
    if (FENCE.test(line)) {
      flush();
      inFence = !inFence;
      return;
    }
    if (inFence) return; // code is not prose: no words, no links
    if (!line.trim() || RULE.test(line)) return flush();
    const h = HEADING.exec(line);
    if (h) {
      flush();
      links.push(...inlineLinks(h[2] ?? ''));
      blocks.push({ type: 'heading', level: (h[1] ?? '#').length, text: inlineText(h[2] ?? ''), line: n });
      return;
    }
    const li = LIST_ITEM.exec(line);
    if (li) return start('list_item', li[1] ?? '', n);
    const q = QUOTE.exec(line);
    if (q) {
      if (paraType === 'quote' && para.length) para.push(q[1] ?? '');
      else start('quote', q[1] ?? '', n);
      return;
    }
    if (!para.length) start('paragraph', line.trim(), n);
    else para.push(line.trim()); // lazy continuation of the current block
  });
  flush();

  const headings = blocks.flatMap((b) =>
    b.type === 'heading' ? [{ level: b.level, text: b.text, line: b.line }] : [],
  );
  const firstParagraph = blocks.find((b) => b.type === 'paragraph')?.text ?? '';
  return {
    blocks,
    headings,
    links,
    firstParagraph,
    plainText: blocks.map((b) => b.text).join('\n'),
    bodyText: blocks
      .filter((b) => b.type !== 'heading')
      .map((b) => b.text)
      .join('\n'),
  };
}
