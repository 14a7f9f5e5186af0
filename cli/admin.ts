/** `vps admin …`: the AdminService over Connect, printing JSON so scripts can chain the results. */
import { createInterface } from 'node:readline';
import { toJson, type DescMessage, type DescMethodUnary, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Command, InvalidArgumentError } from 'commander';
import { AdminService } from '../gen/vps/admin/v1/admin_pb';
import { Track } from '../gen/vps/seat/v1/seat_pb';
import { renderConnectError } from '../core/errors';
import { adminClientConfig } from './client-config';
import { EXIT } from './exit-codes';
import { UsageError } from './usage-error';

const TRACK_FLAG: Record<string, Track> = { video: Track.VIDEO, shop: Track.SHOP };

function isoDate(value: string) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('expected an ISO 8601 date, e.g. 2027-01-31T00:00:00Z');
  return timestampFromDate(d);
}
function nonNegativeInt(value: string) {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}
function track(value: string) {
  const t = TRACK_FLAG[value];
  if (t === undefined) throw new InvalidArgumentError('expected video or shop');
  return t;
}

/** The first line of stdin, without its line ending; a prompt on stderr only when a person types it. */
async function readLineFromStdin(prompt: string): Promise<string | undefined> {
  if (process.stdin.isTTY) process.stderr.write(prompt);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  try {
    for await (const line of lines) return line;
    return undefined;
  } finally {
    lines.close();
  }
}

export function adminCommand(): Command {
  const admin = new Command('admin')
    .description('operator commands over the core AdminService (JSON output)')
    .option('--core-url <url>', 'core Connect URL (env VPS_CORE_URL; default http://127.0.0.1:8081)')
    .option('--admin-token <token>', 'admin token (env VPS_ADMIN_TOKEN; default .data/admin-token)');

  async function call<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, input: MessageInitShape<I>) {
    const cfg = adminClientConfig(admin.opts<{ coreUrl?: string; adminToken?: string }>());
    const transport = createConnectTransport({ baseUrl: cfg.coreUrl, httpVersion: '1.1' });
    const headers = cfg.adminToken ? { authorization: `Bearer ${cfg.adminToken}` } : undefined;
    try {
      const res = await transport.unary(method, undefined, 30_000, headers, input);
      process.stdout.write(`${JSON.stringify(toJson(method.output, res.message, { alwaysEmitImplicit: true }), null, 2)}\n`);
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      if (err.code === Code.Unavailable && !err.metadata.has('vps-code')) {
        process.stderr.write(
          `${JSON.stringify({ error: 'network', message: `cannot reach core at ${cfg.coreUrl}: ${err.rawMessage}` })}\n`,
        );
        process.exitCode = EXIT.network;
        return;
      }
      const r = renderConnectError(err);
      process.stderr.write(`${JSON.stringify({ code: r.code, message: r.code === 5000 ? err.rawMessage : r.message, data: r.data })}\n`);
      process.exitCode = EXIT.apiError;
    }
  }
  const m = AdminService.method;

  const customers = admin.command('customers').description('customers, their seat quota and plan');
  customers
    .command('create')
    .requiredOption('--name <name>', 'display name')
    .option('--seat-quota <n>', 'seats the customer may hold', nonNegativeInt, 0)
    .option('--plan-expires-at <iso>', 'end of the plan (default: never)', isoDate)
    .action((o) => call(m.createCustomer, { name: o.name, seatQuota: o.seatQuota, planExpiresAt: o.planExpiresAt }));
  customers.command('list').action(() => call(m.listCustomers, {}));
  customers.command('get <id>').action((id: string) => call(m.getCustomer, { id }));
  customers
    .command('update <id>')
    .option('--name <name>', 'display name')
    .option('--seat-quota <n>', 'seats the customer may hold', nonNegativeInt)
    .option('--plan-expires-at <iso>', 'end of the plan; a past time expires it now', isoDate)
    .option('--no-plan-expiry', 'make the plan never expire')
    .action((id: string, o) =>
      call(m.updateCustomer, {
        id,
        name: o.name,
        seatQuota: o.seatQuota,
        planExpiresAt: o.planExpiresAt,
        clearPlanExpiry: o.planExpiry === false,
      }),
    );

  const users = admin.command('users').description('users of a customer');
  users
    .command('create')
    .requiredOption('--customer <id>', 'customer id')
    .requiredOption('--email <email>', 'unique e-mail address')
    .option('--name <name>', 'display name', '')
    .action((o) => call(m.createUser, { customerId: o.customer, email: o.email, name: o.name }));
  users
    .command('list')
    .requiredOption('--customer <id>', 'customer id')
    .action((o) => call(m.listUsers, { customerId: o.customer }));
  users.command('disable <id>').action((id: string) => call(m.setUserDisabled, { userId: id, disabled: true }));
  users.command('enable <id>').action((id: string) => call(m.setUserDisabled, { userId: id, disabled: false }));
  users
    .command('set-password <id>')
    .description('set the console password, read as one line from stdin (never a flag: flags end up in shell history and ps)')
    .action(async (id: string) => {
      const password = await readLineFromStdin('console password (one line): ');
      if (password === undefined)
        throw new UsageError('set-password: no password on stdin; pipe it in, e.g. vps admin users set-password <id> < password-file');
      await call(m.setUserPassword, { userId: id, password });
    });

  const keys = admin.command('keys').description('API keys (the plaintext is printed once, at creation)');
  keys
    .command('create')
    .requiredOption('--user <id>', 'user the key is issued to')
    .option('--name <name>', 'label', '')
    .action((o) => call(m.createApiKey, { userId: o.user, name: o.name }));
  keys
    .command('list')
    .requiredOption('--customer <id>', 'customer id')
    .option('--user <id>', "only this user's keys", '')
    .action((o) => call(m.listApiKeys, { customerId: o.customer, userId: o.user }));
  keys.command('revoke <id>').action((id: string) => call(m.revokeApiKey, { id }));

  const seats = admin.command('seats').description('seats and their account bindings');
  seats
    .command('create')
    .requiredOption('--customer <id>', 'customer id')
    .requiredOption('--track <track>', 'video or shop', track)
    .option('--name <name>', 'display name', '')
    .action((o) => call(m.createSeat, { customerId: o.customer, track: o.track, name: o.name }));
  seats
    .command('list')
    .requiredOption('--customer <id>', 'customer id')
    .action((o) => call(m.listSeats, { customerId: o.customer }));
  seats
    .command('bind <seatId>')
    .requiredOption('--account-id <id>', 'businessId (video track) or creatorUserOpenId (shop track)')
    .requiredOption('--access-token <token>', "the account's upstream access token")
    .option('--refresh-token <token>', "the account's upstream refresh token", '')
    .option('--username <name>', "the account's username", '')
    .option('--access-token-expires-at <iso>', 'when the access token expires', isoDate)
    .option('--refresh-token-expires-at <iso>', 'when the refresh token expires', isoDate)
    .action((seatId: string, o) =>
      call(m.bindSeat, {
        seatId,
        accountId: o.accountId,
        accountUsername: o.username,
        credentials: {
          accessToken: o.accessToken,
          refreshToken: o.refreshToken,
          accessTokenExpiresAt: o.accessTokenExpiresAt,
          refreshTokenExpiresAt: o.refreshTokenExpiresAt,
        },
      }),
    );
  seats.command('unbind <seatId>').action((seatId: string) => call(m.unbindSeat, { seatId }));

  admin
    .command('ping-worker')
    .description('run the health workflow through Temporal and a worker')
    .action(() => call(m.pingWorker, {}));
  return admin;
}
