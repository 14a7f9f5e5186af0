/**
 * Every relative link in the repository's Markdown leads somewhere: the file or folder exists and,
 * when the link names a heading of a Markdown file, that heading exists under GitHub's anchor for
 * it. The README is a map into docs/, the folder READMEs and the benchmarks' report, so a moved
 * page or a renamed heading must fail here rather than leave readers at a dead end.
 *
 * Files come from git (tracked, and new files not ignored), so generated and vendored trees
 * (node_modules, gen, console/dist, test-artifacts, all in .gitignore) never count; hidden folders
 * hold tools' state, not documentation, and are left out as well.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');

/** Folders whose Markdown is not ours to keep, should git ever list it. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'gen', 'dist', 'coverage', 'test-artifacts']);

/**
 * Broken links in files this change could not edit, as `file -> target`, each to be fixed by
 * whoever owns the file. An entry that no longer breaks fails the test too, so the list only
 * shrinks.
 */
const KNOWN_BROKEN: string[] = [];

interface Link {
  file: string;
  line: number;
  text: string;
  target: string;
}

function markdownFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'], {
    cwd: REPO,
    encoding: 'utf8',
  });
  const files = listed
    .split('\0')
    .filter((file) => file !== '')
    .filter((file) => file.split('/').every((part) => !part.startsWith('.') && !SKIPPED_FOLDERS.has(part)))
    // A file deleted in the work tree but not yet in the index is listed still.
    .filter((file) => existsSync(path.join(REPO, file)));
  return [...new Set(files)].sort();
}

/** The text with fenced code blocks blanked (line count kept), since links there are examples. */
function withoutFences(text: string): string {
  const lines = text.split('\n');
  let fence: string | null = null;
  return lines
    .map((line) => {
      const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (fence === null && opening) {
        fence = opening[1]!;
        return '';
      }
      if (fence !== null) {
        if (new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(line)) fence = null;
        return '';
      }
      return line;
    })
    .join('\n');
}

/** Inline code spans replaced by as many x's (newlines kept), so `[a](b)` inside code is not a link. */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (span) => span.replace(/[^\n]/g, 'x'));
}

function linksOf(file: string, text: string): Link[] {
  const prose = withoutCodeSpans(withoutFences(text));
  const lineAt = (index: number) => prose.slice(0, index).split('\n').length;
  const links: Link[] = [];
  // Inline links and images: [text](target) or [text](target "title"); <target> form too.
  const inline =
    /!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
  for (const match of prose.matchAll(inline)) {
    links.push({ file, line: lineAt(match.index!), text: match[1]!, target: match[2]!.replace(/^<|>$/g, '') });
  }
  // Reference definitions: [label]: target
  for (const match of prose.matchAll(/^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)/gm)) {
    links.push({ file, line: lineAt(match.index!), text: match[1]!, target: match[2]!.replace(/^<|>$/g, '') });
  }
  return links;
}

/** The text a heading renders to: link and image syntax reduced to their text, tags dropped. */
function renderedHeading(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim();
}

/** GitHub's anchor for a heading: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return renderedHeading(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** Every anchor a Markdown file offers: its headings' slugs (with GitHub's -1, -2 for repeats) and explicit HTML ids. */
function anchorsOf(absolute: string): Set<string> {
  const cached = anchorCache.get(absolute);
  if (cached) return cached;
  const lines = withoutFences(readFileSync(absolute, 'utf8')).split('\n');
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (heading: string) => {
    const base = slugOf(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  };
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(line);
    if (atx) {
      add(atx[1] ?? '');
    } else if (i > 0 && /^ {0,3}(=+|-+)\s*$/.test(line)) {
      // A setext heading: text underlined with = or -, right below a paragraph line.
      const above = lines[i - 1]!;
      if (above.trim() !== '' && !/^ {0,3}([#>|*+-]|\d+[.)])/.test(above) && (i < 2 || lines[i - 2]!.trim() === '')) add(above.trim());
    }
    for (const match of line.matchAll(/<a\s+(?:[^>]*\s)?(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  });
  anchorCache.set(absolute, anchors);
  return anchors;
}

/** Why a link is broken, or null when it leads somewhere. */
function problemOf(link: Link): string | null {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, https:, mailto: and other schemes
  const hash = target.indexOf('#');
  const rawPath = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
  const fileDir = path.dirname(path.join(REPO, link.file));
  const absolute =
    rawPath === ''
      ? path.join(REPO, link.file)
      : path.resolve(rawPath.startsWith('/') ? REPO : fileDir, decodeURIComponent(rawPath.replace(/^\//, '')));
  if (path.relative(REPO, absolute).startsWith('..')) return 'leads outside the repository';
  if (!existsSync(absolute)) return 'no such file or folder';
  if (anchor === null || anchor === '') return null;
  const markdown = statSync(absolute).isDirectory() ? path.join(absolute, 'README.md') : absolute;
  if (!markdown.endsWith('.md') || !existsSync(markdown)) return null; // anchors of other files are not ours to judge
  return anchorsOf(markdown).has(anchor) ? null : `no heading with the anchor #${anchor} in ${path.relative(REPO, markdown)}`;
}

describe('links in the Markdown files', () => {
  const files = markdownFiles();
  const links = files.flatMap((file) => linksOf(file, readFileSync(path.join(REPO, file), 'utf8')));
  const broken = links
    .map((link) => ({ link, problem: problemOf(link) }))
    .filter((found): found is { link: Link; problem: string } => found.problem !== null);
  const key = (link: Link) => `${link.file} -> ${link.target}`;

  it('finds the READMEs and their links', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'bench/README.md', 'docs/README.md', 'sandbox/README.md']));
    expect(links.filter((link) => link.file === 'README.md').length).toBeGreaterThan(10);
  });

  it('lead to files that exist and headings that exist', () => {
    const unexpected = broken
      .filter(({ link }) => !KNOWN_BROKEN.includes(key(link)))
      .map(({ link, problem }) => `${link.file}:${link.line}: [${link.text}](${link.target}): ${problem}`);
    expect(unexpected).toEqual([]);
  });

  it('keeps no allowance for a link that works again', () => {
    const stillBroken = new Set(broken.map(({ link }) => key(link)));
    expect(KNOWN_BROKEN.filter((entry) => !stillBroken.has(entry))).toEqual([]);
  });
});

describe('slugOf', () => {
  it.each([
    ['The two commands', 'the-two-commands'],
    ['Publishing (video track)', 'publishing-video-track'],
    ['Operating: `vps admin`', 'operating-vps-admin'],
    ['bench/gateway: the production topology', 'benchgateway-the-production-topology'],
    ['Where the emulator interprets or departs from official-api.md', 'where-the-emulator-interprets-or-departs-from-official-apimd'],
    ['`parent_comment_id` of comment events', 'parent_comment_id-of-comment-events'],
    ["Requests Node's parser refuses", 'requests-nodes-parser-refuses'],
    ['Comments, direct messages and insights', 'comments-direct-messages-and-insights'],
  ])('%s → %s', (heading, slug) => {
    expect(slugOf(heading)).toBe(slug);
  });
});
