import { LOG_START_ID as SERVICE_LOG_START_ID } from '../../core/events/watch-events';
import { LOG_START_ID, SseParser, type SseFrame } from '../../sdk/event-stream';

/** Every frame of `chunks`, fed one after another to one parser. */
function parse(...chunks: string[]): SseFrame[] {
  const parser = new SseParser();
  return chunks.flatMap((c) => parser.push(c));
}

describe('SseParser', () => {
  it('reads the frames this service sends: retry, an event with id, type and JSON data, a heartbeat', () => {
    const data = JSON.stringify({ id: 'evt_1', type: 'vplat.comment.created' });
    expect(parse(`retry: 3000\n\nid: evt_1\nevent: vplat.comment.created\ndata: ${data}\n\n: heartbeat\n\n`)).toEqual([
      { kind: 'retry', ms: 3000 },
      { kind: 'event', id: 'evt_1', type: 'vplat.comment.created', data },
      { kind: 'comment', text: 'heartbeat' },
    ]);
  });

  it("knows the position the service announces before a customer's first event", () => {
    // The SDK carries the value rather than importing the service's code: the two must not drift.
    expect(LOG_START_ID).toBe(SERVICE_LOG_START_ID);
    expect(parse(`retry: 3000\n\nid: ${SERVICE_LOG_START_ID}\n\n`)).toEqual([
      { kind: 'retry', ms: 3000 },
      { kind: 'position', id: LOG_START_ID },
    ]);
  });

  it("reports a block with an id and no data as the stream's position, and a block with neither as nothing", () => {
    expect(parse('retry: 3000\n\nid: evt_0\n\nevent: ping\n\n')).toEqual([
      { kind: 'retry', ms: 3000 },
      { kind: 'position', id: 'evt_0' },
    ]);
  });

  it('joins the data lines of one event with line feeds', () => {
    expect(parse('data: first\ndata:second\ndata\ndata:  indented\n\n')).toEqual([
      { kind: 'event', id: '', type: 'message', data: 'first\nsecond\n\n indented' },
    ]);
  });

  it('ends lines at CRLF, LF or CR, also when a CRLF is split between chunks', () => {
    expect(parse('id: a\r\ndata: one\r', '\n\r', '\nid: b\rdata: two\r\r')).toEqual([
      { kind: 'event', id: 'a', type: 'message', data: 'one' },
      { kind: 'event', id: 'b', type: 'message', data: 'two' },
    ]);
  });

  it('dispatches at a CR that ends a chunk, without waiting to see whether an LF follows', () => {
    const parser = new SseParser();
    expect(parser.push('data: now\r\r')).toEqual([{ kind: 'event', id: '', type: 'message', data: 'now' }]);
    expect(parser.push('')).toEqual([]);
    expect(parser.push('\ndata: next\n\n')).toEqual([{ kind: 'event', id: '', type: 'message', data: 'next' }]);
  });

  it('keeps an incomplete event until the blank line that ends it arrives', () => {
    const parser = new SseParser();
    expect(parser.push('id: evt_9\nevent: vplat.message.rec')).toEqual([]);
    expect(parser.push('eived\ndata: {"a"')).toEqual([]);
    expect(parser.push(':1}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ kind: 'event', id: 'evt_9', type: 'vplat.message.received', data: '{"a":1}' }]);
  });

  it('keeps the last id for later events until one sets another, and ignores an id with a NUL', () => {
    expect(parse('id: evt_1\ndata: a\n\ndata: b\n\nid: evt_\0x\ndata: c\n\nid\ndata: d\n\n')).toEqual([
      { kind: 'event', id: 'evt_1', type: 'message', data: 'a' },
      { kind: 'event', id: 'evt_1', type: 'message', data: 'b' },
      { kind: 'event', id: 'evt_1', type: 'message', data: 'c' },
      { kind: 'event', id: '', type: 'message', data: 'd' },
    ]);
  });

  it('sends no event for a block without data, and the type of such a block does not leak into the next', () => {
    expect(parse('event: vplat.comment.created\nid: evt_2\n\ndata: x\n\n')).toEqual([
      { kind: 'position', id: 'evt_2' },
      { kind: 'event', id: 'evt_2', type: 'message', data: 'x' },
    ]);
  });

  it('ignores unknown fields, a retry that is not a number, and a leading byte order mark', () => {
    expect(parse('\uFEFFretry: soon\ncolour: blue\ndata: x\n\n')).toEqual([{ kind: 'event', id: '', type: 'message', data: 'x' }]);
  });

  it('takes a field without a colon as that field with an empty value, and keeps colons inside values', () => {
    expect(parse('event\ndata: a: b\n\n')).toEqual([{ kind: 'event', id: '', type: 'message', data: 'a: b' }]);
  });
});
