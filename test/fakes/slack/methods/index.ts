/** Every Web API method the fake implements; anything else answers `unknown_method`. */
import { chatMethods } from './chat.js';
import { conversationMethods } from './conversations.js';
import { identityMethods } from './identity.js';
import type { MethodHandler } from './reply.js';
import { viewMethods } from './views.js';

export type { MethodContext, MethodHandler } from './reply.js';

export const METHODS: Readonly<Record<string, MethodHandler>> = {
  ...identityMethods,
  ...chatMethods,
  ...conversationMethods,
  ...viewMethods,
};
