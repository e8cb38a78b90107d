/** The fake Slack for offline tests: Web API server, Block Kit validation and signed delivery to the app. */
export { FakeSlack, startFakeSlack, type FakeSlackOptions, type PostResult, type WebhookPost } from './server.js';
export * from './blockkit.js';
export * from './events.js';
export type { DeliveryRecord } from './app-link.js';
export type { DelaySpec, FailSpec, PostRate, RateLimitSpec } from './faults.js';
export { INTEGRATION_BOT_ID, WEBHOOK_BOT_ID, type BotPost, type UserPost, type WebhookPayload } from './inbound.js';
export { PERMALINK_BASE } from './methods/chat.js';
export type { ResponseUrlPost } from './response-urls.js';
export type { EphemeralMessage, OpenedView } from './store.js';
export type { Probe, WaitOptions } from './waiters.js';
export type * from './types.js';
