export * from './tenancy';
export * from './seats';
export * from './rate-limits';
export * from './webhooks';
export * from './events';
