/**
 * The interactive reference in a real browser: /docs loads from this server alone, and a reader who
 * pastes the bare key in Authorize (spec, Authentication point 5) can run GET /v1/seats from the
 * page: the page adds `Bearer ` itself, exactly once, and shows the seat in the envelope. It does so
 * whatever name the reader reached the server by, even one other than its configured public URL.
 */
import { createConnectTransport } from '@connectrpc/connect-node';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page, Request } from 'playwright-core';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { freePort } from '../../core/embedded/temporal-dev-server';
import { createLogger } from '../../core/logger';
import { buildApp } from '../../gateway/app';
import { launchBrowser, screenshot } from '../helpers/browser';
import { createBoundSeat, createTenant, startStack, uniqueAccount, type Stack } from '../helpers/stack';

describe('the API reference at /docs', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  const requests: Request[] = [];
  /** A request the page's policy blocks is reported here, as is any script error. */
  const errors: string[] = [];

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
    page = await browser.newPage();
    page.on('request', (req) => requests.push(req));
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('runs GET /v1/seats from the page with the bare key', async () => {
    const tenant = await createTenant(stack);
    const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));

    await page.goto(`${stack.baseUrl}/docs`);
    await page.getByText('paste the bare API key').waitFor();
    const seats = page.locator('.opblock-get', { has: page.locator('[data-path="/v1/seats"]') });
    await seats.waitFor();
    await screenshot(page, 'docs-page');

    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.getByLabel('auth-bearer-value').fill(tenant.apiKey);
    await dialog.getByRole('button', { name: 'Apply credentials' }).click();
    // Once applied, the dialog offers to remove the credentials instead.
    await dialog.getByRole('button', { name: 'Remove authorization' }).waitFor();
    await screenshot(page, 'docs-authorized');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await seats.locator('.opblock-summary').click();
    const sent = page.waitForRequest((req) => new URL(req.url()).pathname === '/v1/seats');
    // "Try it out" is on for every operation (tryItOutEnabled), so Execute is offered at once.
    await seats.getByRole('button', { name: 'Execute' }).click();
    const shown = seats.locator('.live-responses-table .response-col_description pre').first();
    await shown.filter({ hasText: '"code": 0' }).waitFor();
    await shown.scrollIntoViewIfNeeded();
    await screenshot(page, 'docs-seats-response');

    const body = JSON.parse(await shown.innerText()) as {
      code: number;
      message: string;
      data: { items: { id: string; bound: boolean }[] };
    };
    expect(body).toMatchObject({ code: 0, message: 'ok', data: { items: [{ id: seat.id, bound: true }] } });
    const authorization = (await sent).headers().authorization;
    expect(authorization).toBe(`Bearer ${tenant.apiKey}`);
    expect(authorization?.match(/Bearer/gi)).toHaveLength(1);

    // Everything the page needed came from this server, and nothing was refused on the way.
    const external = requests
      .map((r) => new URL(r.url()))
      .filter((u) => u.protocol !== 'data:' && !['127.0.0.1', 'localhost'].includes(u.hostname));
    expect(external.map((u) => u.href)).toEqual([]);
    expect(errors).toEqual([]);
  });
  describe('at a name other than the public URL', () => {
    let gateway: FastifyInstance;
    let port: number;

    beforeAll(async () => {
      // Configured as `npm start` is by default: public URL http://localhost:<port>, listening on 127.0.0.1.
      port = await freePort();
      gateway = await buildApp({
        transport: createConnectTransport({ baseUrl: stack.coreUrl, httpVersion: '1.1', useBinaryFormat: true }),
        logger: createLogger('silent', 'test'),
        media: stack.media,
        maxUploadBytes: 1024 * 1024,
        publicUrl: `http://localhost:${port}`,
      });
      await gateway.listen({ host: '127.0.0.1', port });
    });
    afterAll(() => gateway?.close());

    it.each(['127.0.0.1', 'localhost'])('runs GET /v1/seats from the page opened at %s', async (host) => {
      const tenant = await createTenant(stack);
      const seat = await createBoundSeat(stack, tenant, Track.VIDEO, uniqueAccount('biz'));
      const origin = `http://${host}:${port}`;
      const other = await browser.newPage();
      const failures: string[] = [];
      other.on('console', (msg) => {
        if (msg.type() === 'error') failures.push(msg.text());
      });
      other.on('pageerror', (err) => failures.push(err.message));
      try {
        await other.goto(`${origin}/docs`);
        const seats = other.locator('.opblock-get', { has: other.locator('[data-path="/v1/seats"]') });
        await seats.waitFor();
        await other.locator('.auth-wrapper button.authorize').click();
        const dialog = other.locator('.modal-ux');
        await dialog.getByLabel('auth-bearer-value').fill(tenant.apiKey);
        await dialog.getByRole('button', { name: 'Apply credentials' }).click();
        await dialog.getByRole('button', { name: 'Close' }).click();

        await seats.locator('.opblock-summary').click();
        const sent = other.waitForRequest((req) => new URL(req.url()).pathname === '/v1/seats');
        await seats.getByRole('button', { name: 'Execute' }).click();
        // The call goes to the origin the page came from, so the browser lets the page read the answer.
        expect(new URL((await sent).url()).origin).toBe(origin);
        const shown = seats.locator('.live-responses-table .response-col_description pre').first();
        await shown.filter({ hasText: '"code": 0' }).waitFor();
        await screenshot(other, `docs-seats-response-at-${host}`);
        const body = JSON.parse(await shown.innerText()) as { code: number; data: { items: { id: string }[] } };
        expect(body).toMatchObject({ code: 0, data: { items: [{ id: seat.id }] } });
        expect(failures).toEqual([]);
      } finally {
        await other.close();
      }
    });
  });
});
