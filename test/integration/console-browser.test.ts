/**
 * The web console in a real browser, against the real stack: a user signs in, creates an API key
 * that then works from a program, adds a webhook endpoint, watches the delivery of an emulator
 * comment fail while the receiver answers 500, resends it once the receiver recovers and sees it
 * succeed, resends a delivery that is still retrying, reads the delivery log of every endpoint (long
 * URLs kept inside the table), browses events and publish records, revokes the key and signs out.
 * Every page is screenshotted (test-artifacts/screenshots/console-*.png) for a human look.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createConnectTransport } from '@connectrpc/connect-node';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { Track } from '../../gen/vps/seat/v1/seat_pb';
import { insertPublishRecord } from '../../core/db/repositories/publish-records';
import { consoleSessions } from '../../core/db/schema';
import { newId } from '../../core/ids';
import { publishHandleOf } from '../../core/publishing/handles';
import { createLogger } from '../../core/logger';
import type { RunningWorker } from '../../worker/worker';
import { workflowIds } from '../../workflows/workflow-ids';
import { subscribeToPlatformWebhooks } from '../../core/upstream/vplat/webhooks';
import { buildApp } from '../../gateway/app';
import { launchBrowser, screenshot } from '../helpers/browser';
import { call } from '../helpers/http';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox';
import { createTenant, messageEvent, startStack, startStackWorker, type Stack, type Tenant } from '../helpers/stack';

const PASSWORD = 'correct horse battery staple';
const TEMPORAL_UI = 'http://temporal-ui.test:8233';
/** The console polls while deliveries are in flight; the rate limit has tests of its own. */
const POLLING_RATE = 1_000_000;

interface DeliveryJson {
  id: string;
  status: string;
  reason: string;
  endpointId: string;
  attempts: Array<{ statusCode: number | null }>;
}

/** What a browser says about the delivery table's fit: widths in CSS pixels. */
interface TableFit {
  pageScrollWidth: number;
  viewportWidth: number;
  wrapScrollWidth: number;
  wrapClientWidth: number;
  /** Cells whose box ends right of the table's visible box. */
  cellsOutside: number;
  /** Whole values (titles) shown cut with an ellipsis. */
  cut: string[];
  /** Kept ends of cut values that do not show whole in their cell. */
  tailsHidden: number;
}
/** Runs in the page (a string: the test's compiler does not know the DOM's globals). */
const TABLE_FIT = `(() => {
  const wrap = document.querySelector('.table-wrap');
  const right = wrap.getBoundingClientRect().right;
  const cells = [...wrap.querySelectorAll('td')].filter((td) => td.getBoundingClientRect().right > right + 0.5);
  const cut = [...wrap.querySelectorAll('.ellipsis, .cut-head')].filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.title || e.parentElement.title);
  const tailsHidden = [...wrap.querySelectorAll('.cut-tail')].filter((t) => t.getBoundingClientRect().right > t.closest('td').getBoundingClientRect().right + 0.5).length;
  return {
    pageScrollWidth: document.documentElement.scrollWidth,
    viewportWidth: window.innerWidth,
    wrapScrollWidth: wrap.scrollWidth,
    wrapClientWidth: wrap.clientWidth,
    cellsOutside: cells.length,
    cut,
    tailsHidden,
  };
})()`;

describe('the web console in a browser', () => {
  const taskQueue = `vps-console-${process.pid}-${Date.now()}`;
  let sb: TestSandbox;
  let stack: Stack;
  let worker: RunningWorker;
  let gateway: FastifyInstance;
  let consoleUrl: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: WebhookReceiver;
  /** The key created through the console, plaintext as the dialog showed it. */
  let createdKey: string;
  let tenant: Tenant & { email: string; openId: string; seatId: string; seatName: string };
  /** Script errors, policy (CSP) violations and failed requests; none are expected. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    // The console is served from its build, as in production (made by the global setup).
    [sb, browser, receiver] = await Promise.all([startTestSandbox(), launchBrowser(), startWebhookReceiver()]);
    stack = await startStack({ taskQueue, allowInsecureWebhookUrls: true, ratePerMinute: POLLING_RATE, upstream: sb.upstream });
    worker = await startStackWorker(stack, taskQueue, sb.upstream);
    await subscribeToPlatformWebhooks(sb.upstream.vplat, `${stack.baseUrl}/webhooks/vplat`);
    gateway = await consoleGateway(stack);
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    const address = gateway.server.address();
    consoleUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

    const base = await createTenant(stack);
    await stack.admin.setUserPassword({ userId: base.userId, password: PASSWORD });
    const account = await sb.account('business');
    const seatName = 'Brand account';
    const { seat } = await stack.admin.createSeat({ customerId: base.customerId, track: Track.VIDEO, name: seatName });
    await stack.admin.bindSeat({
      seatId: seat!.id,
      accountId: account.openId,
      credentials: { accessToken: account.tokens.access_token, refreshToken: account.tokens.refresh_token },
    });
    tenant = { ...base, email: `user-${base.customerId}@example.com`, openId: account.openId, seatId: seat!.id, seatName };

    // Clipboard access lets the test read what the Copy button copied.
    context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'], viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg) => {
      // Failed loads are reported below with their URL; the console's line names none.
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) pageErrors.push(msg.text());
    });
    page.on('response', (res) => {
      if (res.status() >= 400 && !isExpectedRefusal(res.url(), res.status())) pageErrors.push(`HTTP ${res.status()} ${res.url()}`);
    });
  }, 120_000);

  /** Receivers started by one test, closed with the rest. */
  const moreReceivers: WebhookReceiver[] = [];

  afterAll(async () => {
    await Promise.all(moreReceivers.map((r) => r.close()));
    await context?.close();
    await browser?.close();
    await gateway?.close();
    await worker?.stop();
    await stack?.close();
    await sb?.close();
    await receiver?.close();
  });

  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

  it('signs in, landing on the page that was asked for', async () => {
    await page.goto(`${consoleUrl}/console/seats`);
    await page.waitForURL(/\/console\/sign-in\?next=%2Fseats$/);
    await page.getByLabel('Email').fill(tenant.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await screenshot(page, 'console-sign-in-refused');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/seats$/);
    const row = page.getByRole('row', { name: new RegExp(tenant.seatName) });
    await row.waitFor();
    await expectText(row, tenant.openId);
    await expectText(row, 'authorized');
    await screenshot(page, 'console-seats');
  });

  it('creates an API key, shown once with Copy, that works from a program', async () => {
    await nav('API keys').click();
    await page.getByLabel('New key name').fill('ci server');
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('you will not see it again').waitFor();
    const key = (createdKey = await dialog.getByLabel('API key').inputValue());
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied to the clipboard.').waitFor();
    // A string, not a function: it runs in the page, whose globals the test's compiler does not know.
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    await screenshot(page, 'console-key-created');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();

    const seats = await call<{ items: Array<{ name: string }> }>(stack.baseUrl, 'GET', '/v1/seats', { key });
    expect(seats.body.code).toBe(0);
    expect(seats.body.data.items.map((s) => s.name)).toEqual([tenant.seatName]);

    // The list shows the prefix of the key, never the key.
    const row = page.getByRole('row', { name: /ci server/ });
    await expectText(row, 'active');
    expect(await page.content()).not.toContain(key);
    await screenshot(page, 'console-keys');
  });

  it('adds a webhook endpoint, showing its signing secret once', async () => {
    receiver.respondWith(500);
    await nav('Webhooks').click();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Event types').fill('vplat.comment.created');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByLabel('Signing secret').inputValue()).not.toBe('');
    await screenshot(page, 'console-endpoint-created');
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('row', { name: new RegExp(escapeRegExp(receiver.url)) }).waitFor();
    await screenshot(page, 'console-webhooks');
  });

  it('shows a failed delivery with every attempt, and a resend that succeeds once the receiver recovers', async () => {
    await sb.control('POST', `/_sandbox/accounts/${tenant.openId}/comments`, { text: 'Love this video' });
    // Every attempt answered 500 (the stack retries on a shortened schedule), so the delivery fails.
    const events = await eventually(
      () => eventsOf(),
      (items) => items.length === 1,
      20_000,
    );
    const eventId = events[0]!.id;
    await eventually(
      () => deliveriesOf(eventId),
      (d) => d[0]?.status === 'failed',
      20_000,
    );

    await nav('Delivery log').click();
    const failed = page.locator('tbody.delivery.failed');
    await failed.waitFor();
    await expectText(failed, 'vplat.comment.created');
    // Failed deliveries open on their attempts: status code, duration and reason of each.
    const attempts = failed.locator('tr.attempts tbody tr');
    expect(await attempts.count()).toBe(receiver.pushes.length);
    await expectText(attempts.first(), '500');
    await page.getByLabel('Outcome').selectOption('failed');
    await page.waitForURL(/status=failed/);
    await failed.waitFor();
    await screenshot(page, 'console-deliveries-failed');

    receiver.respondWith(200);
    await page.getByLabel('Outcome').selectOption('');
    await failed.getByRole('button', { name: 'Resend' }).click();
    // The console polls while the new delivery is pending, so success shows without a click.
    const resent = page.locator('tbody.delivery.succeeded');
    await resent.waitFor({ timeout: 20_000 });
    await expectText(resent, 'resend');
    await screenshot(page, 'console-deliveries-resent');
    const deliveries = await deliveriesOf(eventId);
    expect(deliveries.map((d) => [d.reason, d.status]).sort()).toEqual([
      ['initial', 'failed'],
      ['redeliver', 'succeeded'],
    ]);
  });

  it('resends a delivery that is still retrying, and lists every endpoint’s deliveries with long URLs kept inside the table', async () => {
    const slow = await startWebhookReceiver();
    moreReceivers.push(slow);
    slow.respondWith(500);
    // Slow failures: the test's four attempts then take seconds, not milliseconds, so the worker is
    // stopped while the delivery is still retrying.
    slow.delayEach(1_000);
    const longUrl = `${slow.url}/webhooks/video-publishing/customers/7f3c2a9e-4b1d-4e8a-9c6f-2d5e8a1b3c4d/environments/production-eu-west-1/receivers/comments-and-direct-messages/handler-with-a-rather-long-name`;
    const created = await call<{ id: string }>(stack.baseUrl, 'POST', '/v1/webhook-endpoints', {
      key: tenant.apiKey,
      json: { url: longUrl, eventTypes: ['vplat.message.received'] },
    });
    const longEndpointId = created.body.data.id;
    // Rows are told apart by endpoint id: one receiver's address can be the start of another's (port 4123, port 41234).
    const listed = await call<{ items: Array<{ id: string }> }>(consoleUrl, 'GET', '/v1/webhook-endpoints', { key: tenant.apiKey });
    const firstEndpointId = listed.body.data.items.find((e) => e.id !== longEndpointId)!.id;
    const event = await stack.events.record(messageEvent(tenant, 1, null));
    const endpointLog = async () =>
      (
        await call<{ items: DeliveryJson[] }>(consoleUrl, 'GET', `/v1/webhook-endpoints/${longEndpointId}/deliveries`, {
          key: tenant.apiKey,
        })
      ).body.data.items;
    // One attempt failed and the delivery waits to retry; with the worker stopped it keeps waiting, so
    // the page can be read and clicked without racing the retry schedule.
    await eventually(endpointLog, (d) => (d[0]?.attempts.length ?? 0) >= 1);
    await worker.stop();
    expect((await endpointLog()).map((d) => d.status)).toEqual(['pending']);

    await nav('Delivery log').click();
    // The previous test left the page here: ask again for what happened since.
    await page.getByRole('button', { name: 'Refresh' }).click();
    // Every endpoint's deliveries by default, each row naming its endpoint.
    expect(await page.getByLabel('Endpoint').inputValue()).toBe('');
    const pending = page.locator('tbody.delivery.pending');
    await pending.waitFor();
    await expectText(pending, longUrl);
    await expectText(page.locator('tbody.delivery.failed'), firstEndpointId);
    const resend = pending.getByRole('button', { name: 'Resend' });
    expect(await resend.isEnabled()).toBe(true);
    await resend.click();
    await expectText(page.getByRole('status'), 'Resent vplat.message.received');
    // The new delivery is listed beside the one still retrying, marked as a resend.
    await waitForCount(() => pending.count(), 2);
    await expectText(pending, 'resend');
    await screenshot(page, 'console-deliveries-pending-resent');

    // Long URLs and ids are cut inside their cells, whole in the title; the table fits its box.
    expect(await page.locator(`td.endpoint .cut[title="${longUrl}"]`).count()).toBe(2);
    expect(await page.locator(`td.endpoint .cut[title="${longEndpointId}"]`).count()).toBe(2);
    for (const width of [1280, 1024, 760]) {
      await page.setViewportSize({ width, height: 800 });
      const fit = await page.evaluate<TableFit>(TABLE_FIT);
      await screenshot(page, `console-deliveries-all-endpoints-${width}`);
      // Never text over a neighbouring cell, never a page wider than the window.
      expect([width, fit.tailsHidden, fit.pageScrollWidth <= fit.viewportWidth]).toEqual([width, 0, true]);
      expect(fit.cut).toContain(longUrl);
      // From a laptop's width up, the whole table fits its box; below, it scrolls inside it.
      if (width >= 1024) expect([width, fit.wrapScrollWidth <= fit.wrapClientWidth, fit.cellsOutside]).toEqual([width, true, 0]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // The worker back and the receiver well: both deliveries land, and the page follows by itself.
    slow.respondWith(200);
    slow.delayEach(0);
    worker = await startStackWorker(stack, taskQueue, sb.upstream);
    await page.locator('tbody.delivery.succeeded', { hasText: longUrl }).nth(1).waitFor({ timeout: 20_000 });
    const settled = await endpointLog();
    expect(settled.map((d) => [d.reason, d.status, d.attempts.at(-1)?.statusCode]).sort()).toEqual([
      ['initial', 'succeeded', 200],
      ['redeliver', 'succeeded', 200],
    ]);
    expect(new Set(slow.pushes.map((p) => (JSON.parse(p.body) as { id: string }).id))).toEqual(new Set([event.event.id]));

    // One endpoint, then all of them again.
    await page.getByLabel('Endpoint').selectOption(longEndpointId);
    await page.waitForURL(new RegExp(`endpoint=${longEndpointId}`));
    await waitForCount(() => page.locator('tbody.delivery').count(), 2);
    expect(await page.locator('tbody.delivery', { hasText: firstEndpointId }).count()).toBe(0);
    await page.getByLabel('Endpoint').selectOption('');
    await page.waitForURL((url) => !url.search.includes('endpoint='));
    await waitForCount(() => page.locator('tbody.delivery', { hasText: firstEndpointId }).count(), 2);
    expect(await page.locator('tbody.delivery', { hasText: longEndpointId }).count()).toBe(2);
    await screenshot(page, 'console-deliveries-all-endpoints');

    // A deleted endpoint's deliveries stay in the log, named by id.
    await call(consoleUrl, 'DELETE', `/v1/webhook-endpoints/${longEndpointId}`, { key: tenant.apiKey });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await waitForCount(() => page.locator('tbody.delivery', { hasText: 'deleted endpoint' }).count(), 2);
    expect(await page.locator('tbody.delivery', { hasText: longEndpointId }).count()).toBe(2);
  });

  it('browses events (reached with the g e shortcut) and opens one, with its JSON and its deliveries', async () => {
    await page.keyboard.press('g');
    await page.keyboard.press('e');
    await page.waitForURL(/\/console\/events$/);
    const [event] = await eventsOf();
    const link = page.getByRole('link', { name: event!.id });
    await link.waitFor();
    await screenshot(page, 'console-events');
    await link.click();
    await page.waitForURL(new RegExp(`/console/events/${event!.id}$`));
    const json = page.getByLabel('Event JSON');
    await expectText(json, '"text": "Love this video"');
    // The deliveries load on their own request after the event, so wait for both rows before counting.
    const deliveries = page.locator('tbody.delivery');
    await deliveries.nth(1).waitFor();
    expect(await deliveries.count()).toBe(2);
    await screenshot(page, 'console-event');
  });

  it('sends a test event to one endpoint and follows its delivery until it lands', async () => {
    // The receiver answers 200 again since the resend above.
    await nav('Webhooks').click();
    const row = page.getByRole('row', { name: new RegExp(escapeRegExp(receiver.url)) });
    const before = receiver.pushes.length;
    await row.getByRole('button', { name: 'Send test event' }).click();
    // Followed on the page without a click: pending at first, then the receiver's answer.
    await expectText(row.getByRole('status'), 'Delivered: HTTP 200');
    await screenshot(page, 'console-webhook-test');
    expect(receiver.pushes.slice(before).map((p) => (JSON.parse(p.body) as { type: string }).type)).toEqual(['service.endpoint.test']);
    // The note links to the test's event.
    await row.getByRole('status').getByRole('link', { name: 'Event' }).click();
    const json = page.getByLabel('Event JSON');
    await expectText(json, '"type": "service.endpoint.test"');
    const testId = (JSON.parse((await json.textContent())!) as { id: string }).id;

    // The event list leaves test events out, as the API does, until they are asked for.
    await nav('Events').click();
    await page.getByRole('link', { name: (await eventsOf())[0]!.id }).waitFor();
    expect(await page.getByRole('link', { name: testId }).count()).toBe(0);
    await page.getByLabel('Test events').check();
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/includeTest=true/);
    await page.getByRole('link', { name: testId }).waitFor();
  });

  it('edits an endpoint read afresh: its description, and switching it off and on, over PATCH', async () => {
    await nav('Webhooks').click();
    const row = page.getByRole('row', { name: new RegExp(escapeRegExp(receiver.url)) });
    await row.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit endpoint' });
    // The form holds what GET /v1/webhook-endpoints/{id} answered: the URL as stored, parsed.
    const storedUrl = new URL(receiver.url).href;
    expect(await dialog.getByLabel('URL').inputValue()).toBe(storedUrl);
    expect(await dialog.getByLabel('Event types').inputValue()).toBe('vplat.comment.created');
    await dialog.getByLabel('Description').fill('Comment auto-replies');
    await dialog.getByLabel('Receives pushes').uncheck();
    await screenshot(page, 'console-endpoint-edit');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expectText(row, 'Comment auto-replies');
    await expectText(row, 'disabled');

    const listed = await call<{ items: Array<{ url: string; description: string | null; disabledReason: string | null }> }>(
      stack.baseUrl,
      'GET',
      '/v1/webhook-endpoints',
      { key: tenant.apiKey },
    );
    expect(listed.body.data.items.find((e) => e.url === storedUrl)).toMatchObject({
      description: 'Comment auto-replies',
      disabledReason: 'disabled by request',
    });

    await row.getByRole('button', { name: 'Edit' }).click();
    await dialog.getByText('Disabled: disabled by request').waitFor();
    await dialog.getByLabel('Receives pushes').check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expectText(row, 'enabled');
    await expectText(row, 'Comment auto-replies');
  });

  it('lists publish records, each linked to its workflow in the Temporal UI', async () => {
    await nav('Publish records').click();
    await page.getByText('No publish records').waitFor();
    // A record as a refused publish leaves it; publishing itself has its own end-to-end tests.
    const videoRecord = (id: string) => ({
      id,
      customerId: tenant.customerId,
      seatId: tenant.seatId,
      track: 'video' as const,
      kind: 'video' as const,
      channel: 'v1.3' as const,
      accountId: tenant.openId,
      request: {},
      workflowId: workflowIds.publish(id),
    });
    const id = newId('pub');
    await insertPublishRecord(stack.database.db, {
      ...videoRecord(id),
      status: 'publish_failed',
      shareId: `share-${id}`,
      reason: 'video duration exceeds the limit',
    });
    // One the platform has not given its id yet: the service's handle stands in, marked as such.
    const waiting = newId('pub');
    await insertPublishRecord(stack.database.db, { ...videoRecord(waiting), status: 'submitted' });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expectText(page.getByRole('row', { name: new RegExp(waiting) }), `${publishHandleOf(waiting)} (handle)`);
    const row = page.getByRole('row', { name: new RegExp(id) });
    await expectText(row, 'publish_failed');
    await expectText(row, 'video duration exceeds the limit');
    const link = row.getByRole('link', { name: /Open in Temporal/ });
    expect(await link.getAttribute('href')).toBe(
      `${TEMPORAL_UI}/namespaces/default/workflows/${encodeURIComponent(workflowIds.publish(id))}`,
    );
    await screenshot(page, 'console-publish-records');
  });

  it('revokes the key after a confirmation, and the key stops working at once', async () => {
    await nav('API keys').click();
    const row = page.getByRole('row', { name: /ci server/ });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await screenshot(page, 'console-key-revoke-confirm');
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await expectText(row, 'revoked');
    expect((await call(stack.baseUrl, 'GET', '/v1/seats', { key: createdKey })).body.code).toBe(1001);
    const keys = await call<{ items: Array<{ name: string; revokedAt: string | null }> }>(consoleUrl, 'GET', '/console/api/keys', {
      headers: { cookie: await cookieHeader() },
    });
    expect(keys.body.data.items.find((k) => k.name === 'ci server')?.revokedAt).not.toBeNull();
  });

  it('connects an account to an unbound seat through the emulator’s consent page, and unbinds it', async () => {
    const account = await sb.account('business');
    const { seat } = await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: 'New seat' });
    await nav('Seats').click();
    const row = page.getByRole('row', { name: /New seat/ });
    await row.getByRole('button', { name: 'Connect' }).click();
    // The platform's page, on the emulator's origin.
    await page.waitForURL(new RegExp(`^${escapeRegExp(sb.url)}/v2/auth/authorize`));
    await page.locator(`input[name="open_id"][value="${account.openId}"]`).check();
    await screenshot(page, 'console-seat-consent');
    await page.getByRole('button', { name: 'Authorize' }).click();
    // Back through the callback of the service's public origin (core's publicUrl), completed by the console page.
    await page.waitForURL(new RegExp(`/console/seats\\?connected=${seat!.id}$`));
    const connected = page.getByRole('row', { name: /New seat/ });
    await expectText(connected, account.openId);
    await expectText(connected, 'authorized');
    await expectText(page.getByRole('status'), 'Connected');
    await screenshot(page, 'console-seat-connected');
    // Unbinding asks first, then frees the seat.
    await connected.getByRole('button', { name: 'Unbind' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Unbind seat' }).click();
    await expectText(page.getByRole('row', { name: /New seat/ }), 'not bound');
    // The walk-through ends on the console gateway it began on.
    await page.goto(`${consoleUrl}/console/seats`);
    await row.waitFor();
  });

  it('finishes a connect after a sign-in when the session ended while the person was on the platform’s page', async () => {
    const account = await sb.account('business');
    const { seat } = await stack.admin.createSeat({ customerId: tenant.customerId, track: Track.VIDEO, name: 'Late seat' });
    await nav('Seats').click();
    // Created behind the page's back: ask for the list again.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page
      .getByRole('row', { name: /Late seat/ })
      .getByRole('button', { name: 'Connect' })
      .click();
    await page.waitForURL(new RegExp(`^${escapeRegExp(sb.url)}/v2/auth/authorize`));
    await page.locator(`input[name="open_id"][value="${account.openId}"]`).check();
    // The session runs out while the person is on the platform's page.
    await stack.database.db
      .update(consoleSessions)
      .set({ expiresAt: sql`clock_timestamp() - interval '1 second'` })
      .where(eq(consoleSessions.userId, tenant.userId));
    await page.getByRole('button', { name: 'Authorize' }).click();

    await page.waitForURL(/\/console\/sign-in\?next=%2Fseats$/);
    // The platform's code never stays in the address bar, signed in or not.
    expect(page.url()).not.toContain('connect_code');
    await expectText(page.getByRole('status'), 'Sign in to finish connecting the account');
    await screenshot(page, 'console-connect-sign-in');
    await page.getByLabel('Email').fill(tenant.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.waitForURL(new RegExp(`/console/seats\\?connected=${seat!.id}$`));
    const connected = page.getByRole('row', { name: /Late seat/ });
    await expectText(connected, account.openId);
    await expectText(connected, 'authorized');
  });

  it('signs out to the sign-in page, and the session no longer works', async () => {
    const cookie = await cookieHeader();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await screenshot(page, 'console-signed-out');
    expect((await call(consoleUrl, 'GET', '/console/api/session', { headers: { cookie } })).body.code).toBe(1001);
    expect(pageErrors).toEqual([]);
  });

  async function eventsOf() {
    return (await call<{ items: Array<{ id: string }> }>(consoleUrl, 'GET', '/v1/events', { key: tenant.apiKey })).body.data.items;
  }

  async function deliveriesOf(eventId: string) {
    return (await call<{ items: DeliveryJson[] }>(consoleUrl, 'GET', `/v1/events/${eventId}/deliveries`, { key: tenant.apiKey })).body.data
      .items;
  }

  async function cookieHeader(): Promise<string> {
    return (await context.cookies(consoleUrl)).map((c) => `${c.name}=${c.value}`).join('; ');
  }
});

/**
 * A gateway on the stack's core that also serves the console, with a Temporal UI to link to. The
 * stack's own gateway keeps ingesting the emulator's webhooks; both share core and the database.
 * (Once buildApp registers the console itself, pass the Temporal UI through its options instead.)
 */
async function consoleGateway(stack: Stack): Promise<FastifyInstance> {
  const app = await buildApp({
    transport: createConnectTransport({ baseUrl: stack.coreUrl, httpVersion: '1.1', useBinaryFormat: true }),
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'console-gateway'),
    media: stack.media,
    maxUploadBytes: 1024 * 1024,
    temporalUiUrl: TEMPORAL_UI,
  });
  return app;
}

/** Waits until `count` reads `expected` (rows appear as the page reloads on its own). */
async function waitForCount(count: () => Promise<number>, expected: number): Promise<void> {
  await eventually(count, (n) => n === expected, 10_000, 100);
}

async function expectText(locator: ReturnType<Page['locator']>, text: string): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ timeout: 10_000 });
}

/** Asking for the session while signed out, and the wrong password, are refused by design. */
function isExpectedRefusal(url: string, status: number): boolean {
  return status === 401 && new URL(url).pathname === '/console/api/session';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
