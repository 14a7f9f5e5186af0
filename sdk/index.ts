/** The typed client of the /v1 API. */
export { createVpsClient, type ClientConfig, type CallOptions, type RetryInfo, type VpsClient } from './client';
export { ENDPOINTS } from './endpoints';
export type { Endpoint, FileAnswer, UploadFile } from './endpoint';
export { VpsApiError, VpsNetworkError, type Envelope } from './errors';
export { DEFAULT_RETRY_POLICY, decideRetry, type RetryPolicy } from './retry-policy';
export {
  LOG_START_ID,
  SseParser,
  streamEvents,
  type EventStreamOptions,
  type ReconnectBackoff,
  type SseFrame,
  type StreamedEvent,
  type StreamState,
} from './event-stream';
export {
  constructWebhookEvent,
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  expectedSignature,
  MalformedSignatureHeaderError,
  MissingSignatureHeaderError,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  SignatureMismatchError,
  SignatureTimestampError,
  STANDARD_WEBHOOK_HEADERS,
  standardWebhooksSecret,
  verifyWebhookSignature,
  WebhookSignatureError,
  type ParsedSignatureHeader,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookEvent,
  type WebhookSignatureFailure,
} from './webhook-signature';
