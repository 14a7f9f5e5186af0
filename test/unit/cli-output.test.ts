/** How `vps` prints: tables, fields, progress lines, JSON versus tables; and the status polling loop. */
import type { PublishStatus } from '../../core/db/schema';
import { pollUntilTerminal } from '../../cli/commands/status';
import {
  bar,
  cellText,
  formatBytes,
  Output,
  pollProgressText,
  ProgressLine,
  renderFields,
  renderTable,
  uploadProgressText,
  wantsJson,
} from '../../cli/output';

/** A stream that keeps what is written, as a terminal or as a pipe. */
function stream(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, write: (text: string) => chunks.push(text), text: () => chunks.join('') };
}

describe('tables', () => {
  const rows = [
    { id: 'vid_1', status: 'available', url: 'https://example.com/a/very/long/path/to/the/video.mp4', size: 1024 },
    { id: 'vid_22', status: 'expired', url: null, size: undefined },
  ];
  const columns = [
    { header: 'id', value: (r: (typeof rows)[number]) => r.id },
    { header: 'status', value: (r: (typeof rows)[number]) => r.status },
    { header: 'size', value: (r: (typeof rows)[number]) => r.size },
    { header: 'url', value: (r: (typeof rows)[number]) => r.url, maxWidth: 20 },
  ];

  it('sizes each column to its widest cell, cuts at maxWidth, and shows absent values as -', () => {
    expect(renderTable(rows, columns)).toBe(
      ['ID      STATUS     SIZE  URL', 'vid_1   available  1024  https://example.com…', 'vid_22  expired    -     -'].join('\n') + '\n',
    );
  });

  it('puts objects and multi-line text on one line', () => {
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText('two\n  lines')).toBe('two lines');
    expect(cellText(false)).toBe('false');
  });

  it('prints a record as aligned fields, nothing cut', () => {
    expect(renderFields({ id: 'pub_1', status: 'publish_complete', postId: null })).toBe(
      'id      pub_1\nstatus  publish_complete\npostId  -\n',
    );
  });
});

describe('progress text', () => {
  it('draws a bar for a fraction, clamped to 0..1', () => {
    expect(bar(0, 10)).toBe('[----------]');
    expect(bar(0.5, 10)).toBe('[#####-----]');
    expect(bar(3, 10)).toBe('[##########]');
  });

  it('shows upload bytes and percentage, or bytes alone when the size is unknown', () => {
    expect(uploadProgressText(512 * 1024, 2 * 1024 * 1024)).toBe(`uploading ${bar(0.25)} 25% 512.0 KB / 2.0 MB`);
    expect(uploadProgressText(100, undefined)).toBe('uploading 100 B');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GB');
  });

  it('shows the poll attempt and the current status', () => {
    expect(pollProgressText(3, 30, 'publish_processing')).toBe(`polling ${bar(0.1)} attempt 3/30 publish_processing`);
  });

  it('rewrites one line on a terminal when its text changes and ends it once; writes nothing to a pipe', () => {
    const tty = stream(true);
    const line = new ProgressLine(tty);
    line.update('a');
    line.update('b');
    line.update('b');
    line.done();
    line.done();
    expect(tty.text()).toBe('\ra\x1b[K\rb\x1b[K\n');

    const pipe = stream(false);
    new ProgressLine(pipe).update('a');
    expect(pipe.text()).toBe('');
  });
});

describe('JSON or table', () => {
  it('chooses JSON when stdout is piped or --json is given, a table on a terminal otherwise', () => {
    expect(wantsJson({ isTTY: false }, undefined)).toBe(true);
    expect(wantsJson({ isTTY: undefined }, undefined)).toBe(true);
    expect(wantsJson({ isTTY: true }, true)).toBe(true);
    expect(wantsJson({ isTTY: true }, undefined)).toBe(false);
  });

  const page = { items: [{ id: 'whk_1' }], nextCursor: 'c2' };
  const view = [{ header: 'id', value: (r: { id: string }) => r.id }];

  it('prints a page as JSON on a pipe', () => {
    const out = stream(false);
    new Output(undefined, out, stream(false)).print(page, view);
    expect(JSON.parse(out.text())).toEqual(page);
  });

  it('prints a page as a table with its next cursor on a terminal', () => {
    const out = stream(true);
    new Output(undefined, out, stream(true)).print(page, view);
    expect(out.text()).toBe('ID\nwhk_1\nnext page: --cursor c2\n');
  });

  it('names no next page when the events page says there is none', () => {
    const out = stream(true);
    new Output(undefined, out, stream(true)).print({ items: [], nextCursor: 'c3', hasMore: false }, view);
    expect(out.text()).toBe('(none)\n');
  });

  it('ends a progress line before a note, so the note starts on its own line', () => {
    const err = stream(true);
    const output = new Output(undefined, stream(true), err);
    output.progress.update('uploading');
    output.note('retrying');
    expect(err.text()).toBe('\ruploading\x1b[K\nvps: retrying\n');
  });
});

describe('pollUntilTerminal', () => {
  const answers = (...statuses: PublishStatus[]) => {
    const queue = [...statuses];
    return jest.fn(async () => ({ status: queue.shift() ?? statuses[statuses.length - 1]! }));
  };

  it('checks at once, waits the interval between checks, and stops at the first terminal status', async () => {
    const check = answers('submitted', 'publish_processing', 'publish_draft_inbox', 'publish_complete');
    const wait = jest.fn(async () => undefined);
    const seen: string[] = [];
    const result = await pollUntilTerminal(
      check,
      { intervalMs: 5_000, attempts: 30 },
      { wait, onAttempt: (n, s) => seen.push(`${n}:${s}`) },
    );
    expect(result).toEqual({ last: { status: 'publish_draft_inbox' }, terminal: true });
    expect(seen).toEqual(['1:submitted', '2:publish_processing', '3:publish_draft_inbox']);
    expect(wait.mock.calls).toEqual([[5_000], [5_000]]);
  });

  it('gives up after the attempts with the last answer, not terminal', async () => {
    const check = answers('publish_processing');
    const result = await pollUntilTerminal(check, { intervalMs: 1, attempts: 3 }, { wait: async () => undefined });
    expect(result).toEqual({ last: { status: 'publish_processing' }, terminal: false });
    expect(check).toHaveBeenCalledTimes(3);
  });

  it('waits before the first check after a publish answer, and does not poll a terminal one', async () => {
    const wait = jest.fn(async () => undefined);
    const check = answers('publish_complete');
    await pollUntilTerminal(check, { intervalMs: 7_000, attempts: 30 }, { wait }, { status: 'submitted' as PublishStatus });
    expect(wait.mock.calls).toEqual([[7_000]]);

    const none = answers('publish_complete');
    expect(
      await pollUntilTerminal(none, { intervalMs: 7_000, attempts: 30 }, { wait }, { status: 'service_error' as PublishStatus }),
    ).toEqual({
      last: { status: 'service_error' },
      terminal: true,
    });
    expect(none).not.toHaveBeenCalled();
  });
});
