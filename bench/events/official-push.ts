/**
 * Official webhook pushes as the platform sends them: a direct-message envelope whose content is
 * unique per push (the service deduplicates by content), signed with the app secret over
 * "<t>.<raw body>" in the `TikTok-Signature` header.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { SANDBOX_APP } from '../../core/upstream/settings';

/** The account the bench tenant's seat is bound to: pushes for it are stored, not ignored. */
export const BENCH_ACCOUNT = 'bench-account';

/** Kept-alive connections to the gateway, as many as the senders need (no queueing in the client). */
const agent = new Agent({ keepAliveTimeout: 30_000, connections: null });

const runId = randomBytes(4).toString('hex');
let sequence = 0;

/** A new signed push: its body and headers (the intake baseline is sent the same bytes). */
export function signedPush(): { body: string; headers: Record<string, string> } {
  const i = sequence++;
  const body = JSON.stringify({
    client_key: SANDBOX_APP.vplatAppId,
    event: 'im_receive_msg',
    create_time: Math.floor(Date.now() / 1000),
    user_openid: BENCH_ACCOUNT,
    content: JSON.stringify({ message_id: `m-${runId}-${i}`, type: 'text', text: { body: `hello ${i}` }, timestamp: Date.now() }),
  });
  const t = Math.floor(Date.now() / 1000);
  const signature = createHmac('sha256', SANDBOX_APP.vplatAppSecret).update(`${t}.${body}`).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'tiktok-signature': `t=${t},s=${signature}` } };
}

export interface PushResult {
  eventId: string;
  /** When the push was sent, and when the gateway answered (stored), in ms since the epoch. */
  sentAt: number;
  answeredAt: number;
}

/** Sends one signed push to `url`; anything but a stored event fails the run. */
export async function sendPush(url: string): Promise<PushResult> {
  const { body, headers } = signedPush();
  const sentAt = Date.now();
  const res = await request(url, { method: 'POST', headers, body, dispatcher: agent });
  const answer = (await res.body.json()) as { data?: { outcome?: string; eventId?: string | null } };
  const answeredAt = Date.now();
  if (res.statusCode !== 200 || answer.data?.outcome !== 'stored' || !answer.data.eventId) {
    throw new Error(`the push was not stored: HTTP ${res.statusCode} ${JSON.stringify(answer)}`);
  }
  return { eventId: answer.data.eventId, sentAt, answeredAt };
}

/** POSTs `body` with `headers`, for the intake comparison: true when answered 200. */
export async function postOnce(url: string, push: { body: string; headers: Record<string, string> }): Promise<boolean> {
  const res = await request(url, { method: 'POST', headers: push.headers, body: push.body, dispatcher: agent });
  await res.body.dump();
  return res.statusCode === 200;
}

export function closePushAgent(): Promise<void> {
  return agent.close();
}
