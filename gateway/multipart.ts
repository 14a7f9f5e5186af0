/**
 * What every multipart route shares: text fields before or after one file part, the file taken in
 * (stored, or held for one RPC) only once core has accepted the caller, so an unknown caller's
 * file is never kept; a malformed or unexpected part refused with 2001 (after the caller is
 * authenticated, so an anonymous caller learns that first); and an answer given before the whole
 * body was read, settled so that every client reads it rather than a reset (settleBody), the rest
 * of a refused body being read only to be dropped.
 */
import multipart, { type MultipartFile, type MultipartValue } from '@fastify/multipart';
import { ConnectError, type Transport } from '@connectrpc/connect';
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import type { Readable } from 'node:stream';
import { Access } from '../gen/vps/options/v1/options_pb';
import { ApiError } from '../core/errors';
import { authorizeCaller, checkWriter, forwardResponseHeaders } from './rpc-route';

/** Text fields are ids and account names: a kilobyte is plenty, and bounds what is buffered. */
export const FIELD_LIMIT_BYTES = 1024;
/**
 * A refused upload whose body is at most this long is read to its end before the answer (the
 * configuration's UPLOAD_DRAIN_BYTES; this is its default): enough for any image upload and a
 * short clip, and little to take in on the way to a refusal.
 */
export const DEFAULT_UPLOAD_DRAIN_BYTES = 16 * 1024 * 1024;
/**
 * While a small body is read before the answer, a pause this long means the client holds the rest
 * back (as one waiting for an early answer may): it is answered then, and read on as below.
 */
const DRAIN_PAUSE_MS = 1_000;
/** After an answer given before the body ended, how long the rest is read and dropped before the connection is cut. */
const DISCARD_LIMIT_MS = 30_000;

/** 2001 naming the field, once the caller is known: an anonymous caller is told 1001 instead. */
export async function refuseInput(transport: Transport, req: FastifyRequest, message: string, field: string): Promise<never> {
  await authorizeCaller(transport, req, Access.WRITE);
  throw new ApiError(2001, message, { data: { field } });
}

/** A multipart form, read up to its file part. */
export interface UploadForm {
  /** The fields that came before the file. */
  fields: Record<string, string>;
  file: MultipartFile;
  /**
   * Once the file stream has been read to its end: the fields that came after it. A part that is
   * not an allowed field, a field given twice, or a body broken after the file is refused (2001).
   */
  fieldsAfterFile(): Promise<Record<string, string>>;
}

/**
 * The text fields named in `allowed`, in any order around the part named `file`, whose stream the
 * caller reads. `what` names the file in messages ("the video", "the image").
 */
export async function readForm(
  req: FastifyRequest,
  transport: Transport,
  opts: { allowed: readonly string[]; what: string },
): Promise<UploadForm> {
  const names = opts.allowed.join(' or ');
  const fields: Record<string, string> = {};
  const parts = req.parts()[Symbol.asyncIterator]();
  const next = async (afterFile: boolean): Promise<IteratorResult<MultipartFile | MultipartValue>> => {
    try {
      return await parts.next();
    } catch (err) {
      // Limits and syntax errors of the body (no boundary, a part cut short): the client's input, never a 5000.
      if (err instanceof ApiError || err instanceof ConnectError) throw err;
      const where = afterFile ? ' after the file part' : '';
      return refuseInput(transport, req, `body: malformed multipart/form-data${where} (${(err as Error).message})`, 'body');
    }
  };
  const field = async (part: MultipartValue, into: Record<string, string>): Promise<void> => {
    if (!opts.allowed.includes(part.fieldname))
      await refuseInput(transport, req, `${part.fieldname}: is not a known field (${names}, and the part file)`, part.fieldname);
    if (typeof part.value !== 'string' || part.valueTruncated || part.value === '' || part.value.includes('\u0000')) {
      await refuseInput(
        transport,
        req,
        `${part.fieldname}: must be a non-empty string of at most ${FIELD_LIMIT_BYTES} bytes without NUL`,
        part.fieldname,
      );
    }
    if (fields[part.fieldname] !== undefined || into[part.fieldname] !== undefined)
      await refuseInput(transport, req, `${part.fieldname}: is given twice; send each field once`, part.fieldname);
    into[part.fieldname] = part.value as string;
  };
  for (;;) {
    const step = await next(false);
    if (step.done) return refuseInput(transport, req, `file: is required (a part named file, with ${names})`, 'file');
    const part = step.value;
    if (part.type === 'field') {
      await field(part, fields);
      continue;
    }
    if (part.fieldname !== 'file')
      await refuseInput(
        transport,
        req,
        `${part.fieldname}: is not a known field; send ${opts.what} as the part named file`,
        part.fieldname,
      );
    const fieldsAfterFile = async (): Promise<Record<string, string>> => {
      const after: Record<string, string> = {};
      for (let step = await next(true); !step.done; step = await next(true)) {
        const late = step.value;
        // One file per form: busboy's limit stops a second one before it is read.
        if (late.type !== 'field') await refuseInput(transport, req, `${late.fieldname}: send one file per upload`, late.fieldname);
        else await field(late, after);
      }
      return after;
    };
    return { fields, file: part, fieldsAfterFile };
  }
}

/**
 * Settles a request answered before its body was read (a refusal, a file over its cap), so that
 * the client reads the answer rather than a reset: closing a socket with unread bytes resets it,
 * and a client still sending then sees EPIPE or ECONNRESET instead of the answer (Node's fetch and
 * undici on some systems, the SDK's "cannot reach"). A body of at most `drainBytes` is read to its
 * end first, and the answer then leaves the connection open for the next request. A larger one, or
 * one whose client pauses for DRAIN_PAUSE_MS, is answered at once and read on while it arrives,
 * for DISCARD_LIMIT_MS at most (then the connection is cut): undici takes such an early answer as
 * the response and stops sending, and Chromium sends on to the end, then reads it.
 */
export async function settleBody(req: FastifyRequest, drainBytes: number): Promise<void> {
  const raw = req.raw;
  if (raw.readableEnded || raw.destroyed) return;
  // From the multipart parser, whose parts no one reads any more.
  raw.unpipe();
  const declared = Number(req.headers['content-length']);
  const drained = Number.isFinite(declared) && declared > drainBytes ? false : await drain(raw, drainBytes);
  if (drained) return;
  const timer = setTimeout(() => raw.socket?.destroy(), DISCARD_LIMIT_MS);
  timer.unref();
  raw.once('close', () => clearTimeout(timer));
  raw.once('end', () => clearTimeout(timer));
  raw.resume();
}

/** Reads and drops up to `limit` bytes; true once the body has ended, false when it is longer or paused. */
function drain(raw: FastifyRequest['raw'], limit: number): Promise<boolean> {
  return new Promise((resolve) => {
    let read = 0;
    let pause: NodeJS.Timeout;
    const done = (ended: boolean) => {
      clearTimeout(pause);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onEnd);
      resolve(ended);
    };
    const arm = () => {
      clearTimeout(pause);
      pause = setTimeout(() => done(false), DRAIN_PAUSE_MS);
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > limit) done(false);
      else arm();
    };
    const onEnd = () => done(true);
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onEnd);
    arm();
    raw.resume();
  });
}

/**
 * A route taking one small file (an image) with the field naming its account. When the field comes
 * before the file, `check` asks core whether the caller and the account would be accepted (a
 * write's preflight, which draws nothing from the rate limit) before a byte of the file is read;
 * when it comes after, the caller alone is checked first, the file read, then the account. Either
 * way an unknown caller's file is never read. The file is read into memory with a hard cap of the
 * limit plus one byte, so an oversized file is refused as soon as it passes the limit; `send` hands
 * the bytes to core, which checks the caller and the account again (they may have changed
 * meanwhile), then the bytes.
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
    /** Refused bodies up to this size are read before the answer (settleBody). */
    drainBytes: number;
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
            await refuseInput(transport, req, `body: send multipart/form-data with ${accountField} and the part file`, 'body');
          const form = await readForm(req, transport, { allowed: [accountField], what: 'the image' });
          let account = form.fields[accountField];
          let data: Buffer;
          if (account !== undefined) {
            await opts.check(req, account);
            data = await readCapped(form.file.file, cap);
            // Whatever follows a file within its limit is read, so a second account is refused, not ignored.
            if (data.length <= opts.maxBytes) await form.fieldsAfterFile();
          } else {
            await checkWriter(transport, req);
            data = await readCapped(form.file.file, cap);
            // The account is not known yet, so core cannot judge the bytes: the size is judged here.
            if (data.length > opts.maxBytes)
              throw new ApiError(2001, `file: larger than the limit of ${opts.maxBytes} bytes`, { data: { field: 'file' } });
            account = (await form.fieldsAfterFile())[accountField];
            if (account === undefined) await refuseInput(transport, req, `${accountField}: is required`, accountField);
            await opts.check(req, account!);
          }
          const res = await opts.send(req, { account: account!, fileName: form.file.filename ?? '', data });
          void forwardResponseHeaders(res.header, reply);
          return { code: 0, message: 'ok', data: res.data };
        } catch (err) {
          await settleBody(req, opts.drainBytes);
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
