import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The spec's "Signature verification" steps, written out independently of the signer. */
export function verifyAsSpecSays(header: string, rawBody: string, secret: string, nowSeconds: number): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  const v1s = parts.filter(([k]) => k === 'v1').map(([, v]) => v!);
  if (!t || v1s.length === 0) return false;
  if (Math.abs(nowSeconds - Number(t)) > 300) return false;
  const key = createHash('sha256').update(secret).digest('hex');
  const expected = Buffer.from(createHmac('sha256', key).update(`${t}.${rawBody}`).digest('hex'));
  return v1s.some((v) => v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
}
