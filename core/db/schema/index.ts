export * from './tenancy';
export * from './seats';
export * from './rate-limits';
export * from './webhooks';
export * from './events';
export * from './idempotency';
export * from './media';
export * from './console';
