import { Agent } from 'undici';

/** Rejects when `promise` takes longer than `ms`. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One SSE field block: the fields of one event, or a comment. */
export interface SseBlock {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/**
 * A small SSE parser over a fetch body: blocks separated by blank lines, `field: value` lines.
 * Each stream has a connection pool of its own, closed with it: the shared pool replaces a socket
 * that a cancelled body closed with a fresh idle one, which would hold up the server's close.
 */
export class SseReader {
  private buffer = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  private constructor(
    readonly res: Response,
    private readonly agent: Agent,
  ) {
    this.reader = res.body!.getReader();
  }

  static async open(url: string, headers: Record<string, string>): Promise<SseReader> {
    const agent = new Agent();
    const res = await fetch(url, { headers, dispatcher: agent } as RequestInit);
    return new SseReader(res, agent);
  }

  /** The next block, or undefined once the server has ended the stream. */
  async next(ms = 5_000): Promise<SseBlock | undefined> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const raw = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return parseBlock(raw);
      }
      const chunk = await within(ms, 'an SSE block', this.reader.read());
      if (chunk.done) return undefined;
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** The next event block, skipping comments. */
  async nextEvent(ms = 5_000): Promise<SseBlock> {
    for (;;) {
      const block = await this.next(ms);
      if (!block) throw new Error('the stream ended before an event');
      if (block.data !== undefined) return block;
    }
  }

  /** Leaves, as a client that goes away does. */
  async cancel(): Promise<void> {
    if (this.agent.closed) return;
    await this.reader.cancel();
    await this.agent.close();
  }
}

export function parseBlock(raw: string): SseBlock {
  const block: SseBlock = {};
  for (const line of raw.split('\n')) {
    if (line.startsWith(':')) block.comment = line.slice(1).trim();
    else {
      const colon = line.indexOf(':');
      const field = line.slice(0, colon) as keyof SseBlock;
      block[field] = line.slice(colon + 1).replace(/^ /, '');
    }
  }
  return block;
}
