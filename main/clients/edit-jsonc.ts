import { applyEdits, format, modify, type FormattingOptions } from 'jsonc-parser';

/**
 * Edits of one servers object in a JSON or JSONC file, made on the text with
 * jsonc-parser's `modify` (VS Code's own editor): only the entry's own bytes
 * change; comments, other keys, trailing commas and the file's formatting
 * stay. The inserted text alone is formatted like the lines around it.
 */

/** The file's own indentation and line ends, so an edit looks like the lines around it. */
function formattingOf(text: string): FormattingOptions {
  const m = text.match(/\n([ \t]+)["/]/);
  const indent = m ? m[1]! : '  ';
  return {
    insertSpaces: !indent.includes('\t'),
    tabSize: indent.includes('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/** Sets (or with `undefined`, removes) `servers[name]` where `path` leads to the servers object. */
export function setJsoncEntry(text: string, path: readonly string[], name: string, value: unknown): string {
  const bom = text.charCodeAt(0) === 0xfeff ? '\ufeff' : '';
  let body = text.slice(bom.length);
  if (body.trim() === '') body = '{}\n';
  const options = formattingOf(body);
  for (const e of modify(body, [...path, name], value, {}).sort((a, b) => b.offset - a.offset)) {
    body = body.slice(0, e.offset) + e.content + body.slice(e.offset + e.length);
    if (e.content) body = applyEdits(body, format(body, { offset: e.offset, length: e.content.length }, options));
  }
  return bom + body;
}
