/**
 * The web console's files under /console/: the Vite build (console/dist), index.html for every
 * other /console/* path so the console's history routing survives a reload or a shared link, and
 * /console/config.json with what the console cannot know by itself. /console/api/* belongs to the
 * session routes: an unknown path there gets the API's 404 envelope, never the HTML page.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
// @fastify/send rather than @fastify/static around it: the latter loads the ESM-only
// content-disposition, which the CommonJS test runner cannot require, for downloads we never make.
import send, { type SendOptions } from '@fastify/send';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusOf } from '../../core/errors';

export const DEFAULT_CONSOLE_DIST = path.resolve(__dirname, '..', '..', 'console', 'dist');

export interface ConsoleStaticOptions {
  /** The built console; console/dist of this checkout by default. */
  distDir?: string;
  /** Base URL of the Temporal UI (the one `vps serve` prints), or null to hide workflow links. */
  temporalUiUrl: string | null;
  /** The Temporal namespace the service's workflows run in. */
  temporalNamespace?: string;
}

/** What GET /console/config.json answers; console/src/types.ts reads the same shape. */
export interface ConsoleConfigJson {
  temporalUiUrl: string | null;
  temporalNamespace: string;
}

// The console holds API keys and signing secrets on screen: only its own scripts and styles may
// run, nothing may frame it, and it talks to this origin alone.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Vite puts content-hashed files under assets/: a new build has new names, so they never go stale. */
const ASSETS = 'assets/';

export async function registerConsoleStatic(app: FastifyInstance, opts: ConsoleStaticOptions): Promise<void> {
  const root = opts.distDir ?? DEFAULT_CONSOLE_DIST;
  const config: ConsoleConfigJson = { temporalUiUrl: opts.temporalUiUrl, temporalNamespace: opts.temporalNamespace ?? 'default' };

  app.get('/console/config.json', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('cache-control', 'no-cache').send(config),
  );
  app.get('/console', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/', 301));
  app.get('/console/*', { schema: { hide: true } }, async (req: FastifyRequest<{ Params: { '*': string } }>, reply) => {
    const file = req.params['*'];
    if (file === 'api' || file.startsWith('api/')) return reply.callNotFound();
    // Checked per request, so a build made while the gateway runs is picked up without a restart.
    if (!existsSync(path.join(root, 'index.html'))) return notBuilt(req, reply);
    if (file.startsWith(ASSETS)) return sendFile(req, reply, root, requestPath(req), { maxAge: '365d', immutable: true });
    // Another file of the build (an icon); a missing one is a 404, not the page, so errors stay visible.
    if (path.posix.extname(file) !== '') return sendFile(req, reply, root, requestPath(req), { maxAge: 0 });
    // Any other path is a console route: the page, always revalidated so a deploy shows at once.
    void reply
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin');
    return sendFile(req, reply, root, '/index.html', { maxAge: 0 });
  });
}

/** The still-encoded path below /console: send decodes it once and refuses `..` and dotfiles. */
function requestPath(req: FastifyRequest): string {
  const [pathname = ''] = req.url.split('?');
  return pathname.slice('/console'.length);
}

async function sendFile(req: FastifyRequest, reply: FastifyReply, root: string, file: string, options: SendOptions): Promise<FastifyReply> {
  const result = await send(req.raw, file, { ...options, root, index: false, dotfiles: 'deny' });
  if (result.type === 'file') return reply.code(result.statusCode).headers(result.headers).send(result.stream);
  if (result.type === 'error' && ((result.metadata.error as { status?: number }).status ?? 500) >= 500) throw result.metadata.error;
  // Missing, a directory, or a refused path (traversal, dotfile): all the same 404 to the client.
  reply.callNotFound();
  return reply;
}

/**
 * A gateway started before `scripts/build-console.sh` ran: say so plainly, to people (a 503 page)
 * and to programs (the envelope's 5000, with the status the spec's table gives it).
 */
function notBuilt(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message = 'The console is not built: run scripts/build-console.sh, then reload.';
  void reply.header('cache-control', 'no-store').header('retry-after', '30');
  if (req.headers.accept?.includes('text/html')) {
    return reply
      .code(503)
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><meta charset="utf-8"><title>Console not built</title><h1>Console not built</h1><p>${message}</p></html>`,
      );
  }
  return reply.code(httpStatusOf(5000)).send({ code: 5000, message, data: {} });
}
