import { Type, type Static } from '@sinclair/typebox';
import { PASSWORD_MAX_LENGTH } from '../../core/crypto/passwords';
import { NullableTimestamp, Timestamp } from './common';

export const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, description: 'Sign-in e-mail address (case-insensitive)' }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

export const ConsoleSessionJson = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() }),
  customer: Type.Object({ id: Type.String(), name: Type.String() }),
  csrfToken: Type.String({ description: 'Send as the X-CSRF-Token header with every write made with the session cookie' }),
});

export const ConsoleApiKeyJson = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, for recognising it' }),
  createdAt: Timestamp,
  lastUsedAt: NullableTimestamp,
  revokedAt: NullableTimestamp,
});
export type ConsoleApiKeyJson = Static<typeof ConsoleApiKeyJson>;

export const CreatedConsoleApiKeyJson = Type.Composite([
  ConsoleApiKeyJson,
  Type.Object({ key: Type.String({ description: 'The key itself, returned only here, once' }) }),
]);

export const CreateConsoleApiKeyBody = Type.Object(
  { name: Type.String({ maxLength: 100, description: 'Label for recognising the key' }) },
  { additionalProperties: false },
);
export type CreateConsoleApiKeyBody = Static<typeof CreateConsoleApiKeyBody>;

export const ConsoleApiKeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export type ConsoleApiKeyParams = Static<typeof ConsoleApiKeyParams>;
