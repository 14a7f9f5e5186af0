import { Agent } from 'undici';
import { SseParser, type SseFrame } from '../../sdk/event-stream';

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
 * An SSE reader over a fetch body, parsing with the SDK's parser, one block at a time: an event,
 * a comment or a `retry`, as the tests look at them. Each stream has a connection pool of its own,
 * closed with it: the shared pool replaces a socket that a cancelled body closed with a fresh idle
 * one, which would hold up the server's close.
 */
export class SseReader {
  private readonly parser = new SseParser();
  private readonly frames: SseFrame[] = [];
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
      const frame = this.frames.shift();
      if (frame) return blockOf(frame);
      const chunk = await within(ms, 'an SSE block', this.reader.read());
      if (chunk.done) return undefined;
      this.frames.push(...this.parser.push(this.decoder.decode(chunk.value, { stream: true })));
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

  /** The rest of the body as text: for an answer that is not a stream (a refusal's envelope). */
  async text(ms = 5_000): Promise<string> {
    let text = '';
    for (;;) {
      const chunk = await within(ms, 'the response body', this.reader.read());
      if (chunk.done) return text + this.decoder.decode();
      text += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** Leaves, as a client that goes away does. */
  async cancel(): Promise<void> {
    if (this.agent.closed) return;
    try {
      await this.reader.cancel();
    } finally {
      // A stream the server cut off rejects the cancel; its pool is closed all the same.
      await this.agent.close();
    }
  }
}

/** The blocks of a whole SSE text (a documented example), parsed as a stream's are. */
export function parseSse(text: string): SseBlock[] {
  return new SseParser().push(text).map(blockOf);
}

function blockOf(frame: SseFrame): SseBlock {
  switch (frame.kind) {
    case 'retry':
      return { retry: String(frame.ms) };
    case 'comment':
      return { comment: frame.text };
    case 'position':
      return { id: frame.id };
    case 'event':
      return { ...(frame.id ? { id: frame.id } : {}), event: frame.type, data: frame.data };
  }
}
