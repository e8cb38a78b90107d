/** auth.test, users.info and usergroups.users.list, answered from the fake's configured tables. */
import { strParam } from '../request.js';
import type { SlackStore } from '../store.js';
import { fail, ok, type MethodHandler } from './reply.js';

export const WORKSPACE_URL = 'https://fake.slack.test/';

const authTest: MethodHandler = ({ store, bot }) =>
  ok({
    url: WORKSPACE_URL,
    team: store.team.name,
    team_id: store.team.id,
    user: bot.name,
    user_id: bot.userId,
    bot_id: bot.botId,
    app_id: bot.appId,
    is_enterprise_install: false,
  });

function userObject(store: SlackStore, id: string): Record<string, unknown> | undefined {
  const user = store.users.get(id);
  if (!user) return undefined;
  const realName = user.real_name ?? user.name;
  const displayName = user.display_name ?? '';
  return {
    id: user.id,
    team_id: store.team.id,
    name: user.name,
    real_name: realName,
    deleted: false,
    is_bot: user.is_bot ?? false,
    is_admin: false,
    tz: user.tz ?? 'UTC',
    profile: {
      real_name: realName,
      real_name_normalized: realName,
      display_name: displayName,
      display_name_normalized: displayName,
      team: store.team.id,
    },
  };
}

const usersInfo: MethodHandler = ({ params, store, bot }) => {
  const id = strParam(params.user);
  const user = id ? userObject(store, id) : undefined;
  return user ? ok({ user }) : fail('user_not_found');
};

const usergroupUsers: MethodHandler = ({ params, store, bot }) => {
  const id = strParam(params.usergroup);
  const users = id ? store.usergroups.get(id) : undefined;
  return users ? ok({ users: [...users] }) : fail('no_such_subteam');
};

/** Socket Mode: the WebSocket URL to connect to (real Slack hands out a fresh wss:// URL per call). */
const connectionsOpen: MethodHandler = ({ store }) => (store.socketModeUrl ? ok({ url: store.socketModeUrl }) : fail('not_allowed_token_type'));

export const identityMethods: Record<string, MethodHandler> = {
  'auth.test': authTest,
  'apps.connections.open': connectionsOpen,
  'users.info': usersInfo,
  'usergroups.users.list': usergroupUsers,
};
