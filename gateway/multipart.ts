/**
 * What every multipart route shares: text fields first, then one file part, read as a stream once
 * core has accepted the caller and the account the fields name (never before: an unknown caller's
 * file is not read); a malformed or unexpected part refused with 2001 (after the caller is
 * authenticated, so an anonymous caller learns that first); and an early answer that leaves the
 * rest of the body to be read and dropped rather than reset.
 */
import multipart, { type MultipartFile, type MultipartValue } from '@fastify/multipart';
import { ConnectError, type Transport } from '@connectrpc/connect';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Readable } from 'node:stream';
import { Access } from '../gen/vps/options/v1/options_pb';
import { ApiError } from '../core/errors';
import { authorizeCaller, forwardResponseHeaders } from './rpc-route';

/** Text fields are ids and account names: a kilobyte is plenty, and bounds what is buffered. */
export const FIELD_LIMIT_BYTES = 1024;
/** After an early answer, how long the rest of a request body is read and discarded before the connection is cut. */
const DISCARD_LIMIT_MS = 30_000;

/** 2001 naming the field, once the caller is known: an anonymous caller is told 1001 instead. */
export async function refuseInput(transport: Transport, req: FastifyRequest, message: string, field: string): Promise<never> {
  await authorizeCaller(transport, req, Access.WRITE);
  throw new ApiError(2001, message, { data: { field } });
}

/** Something after the file part, which a route may refuse: the field it concerns and why. */
export interface PartAfterFile {
  field: string;
  reason: string;
}

/**
 * The text fields named in `allowed`, then the part named `file`, whose stream the caller reads.
 * `what` names the file in messages ("the video", "the image"). `afterFile`, once the file is read,
 * says what follows it, if anything does: another part, or a body broken after it.
 */
export async function fieldsThenFile(
  req: FastifyRequest,
  transport: Transport,
  opts: { allowed: readonly string[]; what: string },
): Promise<{ fields: Record<string, string>; file: MultipartFile; afterFile: () => Promise<PartAfterFile | undefined> }> {
  const names = opts.allowed.join(' or ');
  const fields: Record<string, string> = {};
  const parts = req.parts()[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<MultipartFile | MultipartValue>;
    try {
      next = await parts.next();
    } catch (err) {
      // Limits and syntax errors of the body (no boundary, a part cut short): the client's input, never a 5000.
      if (err instanceof ApiError || err instanceof ConnectError) throw err;
      return refuseInput(transport, req, `body: malformed multipart/form-data (${(err as Error).message})`, 'body');
    }
    if (next.done) return refuseInput(transport, req, `file: is required (a part named file, after ${names})`, 'file');
    const part = next.value;
    if (part.type === 'field') {
      if (!opts.allowed.includes(part.fieldname))
        await refuseInput(transport, req, `${part.fieldname}: is not a known field (${names}, then file)`, part.fieldname);
      if (typeof part.value !== 'string' || part.valueTruncated || part.value === '' || part.value.includes('\u0000')) {
        await refuseInput(
          transport,
          req,
          `${part.fieldname}: must be a non-empty string of at most ${FIELD_LIMIT_BYTES} bytes without NUL`,
          part.fieldname,
        );
      }
      fields[part.fieldname] = part.value as string;
      continue;
    }
    if (part.fieldname !== 'file')
      await refuseInput(
        transport,
        req,
        `${part.fieldname}: is not a known field; send ${opts.what} as the part named file`,
        part.fieldname,
      );
    const afterFile = async (): Promise<PartAfterFile | undefined> => {
      try {
        const after = await parts.next();
        return after.done ? undefined : { field: after.value.fieldname, reason: 'must come before the file part' };
      } catch (err) {
        return { field: 'body', reason: `malformed multipart/form-data after the file part (${(err as Error).message})` };
      }
    };
    return { fields, file: part, afterFile };
  }
}

/**
 * An answer before the whole body was read (a refusal, a file over the cap): the connection is
 * closed after the answer, and meanwhile the rest of the body is read and dropped, so the client
 * sees the answer instead of a reset. A client that keeps sending is cut off after a while.
 */
export function discardRest(req: FastifyRequest, reply: FastifyReply): void {
  const raw = req.raw;
  if (raw.readableEnded || raw.destroyed) return;
  void reply.header('connection', 'close');
  raw.unpipe();
  raw.resume();
  const timer = setTimeout(() => raw.socket?.destroy(), DISCARD_LIMIT_MS);
  timer.unref();
  raw.once('close', () => clearTimeout(timer));
}

/**
 * A route taking one small file (an image) with the field naming its account. Before a byte of the
 * file is read, `check` asks core whether the caller and the account would be accepted (a write's
 * preflight, which draws nothing from the rate limit), so an unknown caller's file is never read.
 * The file is then read into memory with a hard cap of the limit plus one byte, so an oversized
 * file is refused as soon as it passes the limit; `send` hands the bytes to core, which checks the
 * caller and the account again (they may have changed meanwhile), then the bytes.
 */
export async function registerSmallUpload(
  app: FastifyInstance,
  opts: {
    transport: Transport;
    url: string;
    schema: FastifySchema & { summary?: string };
    /** The field naming the account (accountId or account). */
    accountField: string;
    maxBytes: number;
    check(req: FastifyRequest, account: string): Promise<unknown>;
    send(
      req: FastifyRequest,
      upload: { account: string; fileName: string; data: Buffer },
    ): Promise<{ header: Headers; data: Record<string, unknown> }>;
  },
): Promise<void> {
  const cap = opts.maxBytes + 1;
  const { transport, accountField } = opts;
  // In a scope of its own, so multipart bodies are parsed for this route only.
  await app.register(async (scope) => {
    await scope.register(multipart, {
      // Our cap is checked while reading; busboy's stops the part one byte past the limit, quietly.
      throwFileSizeLimit: false,
      limits: { fileSize: cap, files: 1, fields: 2, parts: 4, fieldSize: FIELD_LIMIT_BYTES, headerPairs: 20 },
    });
    scope.route({
      method: 'POST',
      url: opts.url,
      config: { access: Access.WRITE, upload: true },
      attachValidation: true,
      schema: opts.schema,
      handler: async (req, reply) => {
        try {
          if (!req.isMultipart())
            await refuseInput(transport, req, `body: send multipart/form-data with ${accountField}, then the part file`, 'body');
          const { fields, file } = await fieldsThenFile(req, transport, { allowed: [accountField], what: 'the image' });
          if (fields[accountField] === undefined)
            await refuseInput(transport, req, `${accountField}: is required, as a field before the file part`, accountField);
          await opts.check(req, fields[accountField]!);
          const data = await readCapped(file.file, cap);
          const res = await opts.send(req, { account: fields[accountField]!, fileName: file.filename ?? '', data });
          void forwardResponseHeaders(res.header, reply);
          return { code: 0, message: 'ok', data: res.data };
        } catch (err) {
          discardRest(req, reply);
          throw err;
        }
      },
    });
  });
}

/** The part's bytes, stopping as soon as `cap` is reached (the rest is discarded by the caller). */
async function readCapped(file: Readable, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of file) {
    const bytes = chunk as Buffer;
    chunks.push(bytes);
    size += bytes.length;
    if (size >= cap) break;
  }
  return Buffer.concat(chunks).subarray(0, cap);
}
