import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

/**
 * The README and docs/ link to each other and to the code: every relative link must name a file
 * or folder that exists, and every #anchor a heading of its page (GitHub's ids).
 */

const ROOT = join(__dirname, '../..');
const markdown = new MarkdownIt({ html: true });

/** The README, docker/README.md and docs/, less docs/pending/: texts waiting to be placed in a page. */
function pages(): string[] {
  const underDocs = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return path === join(ROOT, 'docs/pending') ? [] : underDocs(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return [join(ROOT, 'README.md'), join(ROOT, 'docker/README.md'), ...underDocs(join(ROOT, 'docs'))];
}

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingIds(text: string): Set<string> {
  const tokens = markdown.parse(text, {});
  const ids = new Set<string>();
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const title = (tokens[i + 1].children ?? []).map((child) => child.content).join('');
    const id = title
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let unique = id;
    for (let n = 1; ids.has(unique); n++) unique = `${id}-${n}`;
    ids.add(unique);
  });
  return ids;
}

function links(text: string): string[] {
  const inline = (tokens: Token[]): Token[] => tokens.flatMap((t) => [t, ...inline(t.children ?? [])]);
  return inline(markdown.parse(text, {}))
    .filter((token) => token.type === 'link_open')
    .map((token) => token.attrGet('href')!);
}

/** The links of one page that lead nowhere, as `href: why`. */
function brokenLinks(page: string, text = readFileSync(page, 'utf8')): string[] {
  return links(text)
    .filter((href) => !/^[a-z]+:/i.test(href))
    .flatMap((href) => {
      const [path, anchor] = href.split('#') as [string, string | undefined];
      const target = path === '' ? page : join(dirname(page), decodeURI(path));
      if (path !== '' && !existsSync(target)) return [`${href}: no such file`];
      if (anchor === undefined) return [];
      if (path !== '' && (statSync(target).isDirectory() || !target.endsWith('.md'))) {
        return [`${href}: an anchor into a non-page`];
      }
      const ids = headingIds(path === '' ? text : readFileSync(target, 'utf8'));
      return ids.has(decodeURIComponent(anchor)) ? [] : [`${href}: no heading #${anchor} in ${relative(ROOT, target)}`];
    });
}

describe('the documentation', () => {
  it('should link only to files, folders and headings that exist', () => {
    const broken = pages().flatMap((page) => brokenLinks(page).map((why) => `${relative(ROOT, page)}: ${why}`));
    expect(pages().length).toBeGreaterThanOrEqual(9);
    expect(broken).toEqual([]);
  });

  it('should find a broken file link, a broken anchor and a broken anchor into another page (the check can fail)', () => {
    const page = join(ROOT, 'docs/example.md');
    const text = [
      '# Example',
      '## A heading, with `code` (and more)',
      '[ok](#a-heading-with-code-and-more) [ok](architecture.md) [ok](../README.md#first-ten-minutes)',
      '[web](https://example.com/x#y) `[not a link](nowhere.md)`',
      '[gone](nowhere.md) [bad](#no-such-heading) [bad](../README.md#no-such-heading)',
    ].join('\n\n');

    expect(brokenLinks(page, text)).toEqual([
      'nowhere.md: no such file',
      '#no-such-heading: no heading #no-such-heading in docs/example.md',
      '../README.md#no-such-heading: no heading #no-such-heading in README.md',
    ]);
  });

  it('should reach every page of docs/ from the README', () => {
    const reached = new Set<string>();
    const visit = (page: string): void => {
      if (reached.has(page) || !page.endsWith('.md') || !existsSync(page)) return;
      reached.add(page);
      for (const href of links(readFileSync(page, 'utf8')).filter((h) => !/^[a-z]+:/i.test(h))) {
        const path = href.split('#')[0];
        if (path !== '') visit(join(dirname(page), decodeURI(path)));
      }
    };
    visit(join(ROOT, 'README.md'));
    const unreached = pages().filter((page) => !reached.has(page));
    expect(unreached.map((page) => relative(ROOT, page))).toEqual([]);
  });

  it('should reach the service through $SERVICE_URL in a curl line of the README or docs/, never a host or port of its own', () => {
    const hardCoded = pages()
      .filter((page) => page !== join(ROOT, 'docker/README.md')) // compose publishes port 3000 itself
      .flatMap((page) =>
        readFileSync(page, 'utf8')
          .split('\n')
          .map((line, index) => ({ line, where: `${relative(ROOT, page)}:${index + 1}` }))
          .filter(({ line }) => /^\s*curl\b/.test(line) && /(localhost|127\.0\.0\.1)\b|\$\{?PORT\b/.test(line))
          .map(({ where }) => where),
      );
    expect(hardCoded).toEqual([]);
  });

  it("should list every channel's notification endpoint in docs/api.md", () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? sources(join(dir, entry.name))
          : entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')
            ? [join(dir, entry.name)]
            : [],
      );
    const notifyPaths = sources(join(ROOT, 'src/channels')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/readonly notifyPath = '([^']+)'/g)].map((m) => m[1]),
    );
    const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');

    expect(notifyPaths.length).toBeGreaterThanOrEqual(4);
    expect(notifyPaths.filter((path) => !api.includes(`\`POST /notify/${path}\``))).toEqual([]);
  });

  it('should keep the README a front door: under 300 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines).toBeLessThan(300);
  });
});
