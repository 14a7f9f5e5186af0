import { verifyWebhookSignature, WebhookSignatureError } from '../../sdk';

/**
 * The spec's "Signature verification" steps as a yes or no, for tests that check the signer: the
 * SDK's verifier, written independently of the signer (and itself checked against Stripe's
 * verifier in test/integration/webhook-signature.test.ts), so the steps live once.
 */
export function verifyAsSpecSays(header: string, rawBody: string, secret: string, nowSeconds: number): boolean {
  try {
    verifyWebhookSignature(rawBody, header, secret, { now: new Date(nowSeconds * 1000) });
    return true;
  } catch (err) {
    if (err instanceof WebhookSignatureError) return false;
    throw err;
  }
}
