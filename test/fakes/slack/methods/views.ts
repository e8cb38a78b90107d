/**
 * views.publish / views.open / views.push / views.update. Slack answers a bad view with `invalid_arguments` plus
 * `response_metadata.messages` pointing into `/view/...`; the fake counts those as rejections.
 */
import { toSlackError, validateView } from '../blockkit.js';
import { strParam } from '../request.js';
import type { SlackStore } from '../store.js';
import { fail, ok, reject, type MethodHandler } from './reply.js';

type View = Record<string, unknown>;

function checkView(view: unknown, expected: 'home' | 'modal') {
  const issues = validateView(view);
  const type = (view as View | null)?.type;
  if (issues.length === 0 && type !== expected) issues.push({ pointer: '/view/type', message: `must be ${expected}` });
  return issues.length > 0 ? reject(toSlackError('invalid_arguments', issues)) : undefined;
}

function viewResponse(store: SlackStore, id: string, view: View): View {
  return { id, team_id: store.team.id, app_id: store.bot.appId, bot_id: store.bot.botId, hash: `${id}.hash`, ...view };
}

const publish: MethodHandler = ({ params, store }) => {
  const userId = strParam(params.user_id);
  if (!userId) return fail('invalid_arguments');
  const rejected = checkView(params.view, 'home');
  if (rejected) return rejected;
  const view = params.view as View;
  store.homeViews.set(userId, view);
  return ok({ view: viewResponse(store, store.nextViewId(), view) });
};

const open: MethodHandler = ({ params, store }) => {
  const triggerId = strParam(params.trigger_id);
  if (!triggerId) return fail('invalid_arguments');
  const rejected = checkView(params.view, 'modal');
  if (rejected) return rejected;
  const view = params.view as View;
  const id = store.nextViewId();
  store.openedViews.push({ id, trigger_id: triggerId, view });
  return ok({ view: viewResponse(store, id, view) });
};

/** views.push: a dialog on top of an open one (opened from a click inside it); recorded like views.open. */
const push: MethodHandler = ({ params, store }) => {
  const triggerId = strParam(params.trigger_id);
  if (!triggerId) return fail('invalid_arguments');
  const rejected = checkView(params.view, 'modal');
  if (rejected) return rejected;
  const view = params.view as View;
  const id = store.nextViewId();
  store.openedViews.push({ id, trigger_id: triggerId, view });
  return ok({ view: viewResponse(store, id, view) });
};

const update: MethodHandler = ({ params, store }) => {
  const viewId = strParam(params.view_id);
  const externalId = strParam(params.external_id);
  const opened = store.openedViews.find((v) => v.id === viewId || (externalId && v.view.external_id === externalId));
  if (!opened) return fail('not_found');
  const rejected = checkView(params.view, 'modal');
  if (rejected) return rejected;
  opened.view = params.view as View;
  return ok({ view: viewResponse(store, opened.id, opened.view) });
};

export const viewMethods: Record<string, MethodHandler> = {
  'views.publish': publish,
  'views.open': open,
  'views.update': update,
  'views.push': push,
};
