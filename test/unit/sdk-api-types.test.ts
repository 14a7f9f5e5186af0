/**
 * sdk/api-types.ts is the SDK's copy of the API's JSON types, generated from the gateway's route
 * schemas so that the installed SDK carries no server code. These checks keep it in step: the
 * committed file is what the generator writes today, and each of its types is the one TypeBox
 * derives from the schema it is named after (checked by the type checker, which runs over tests).
 */
import fs from 'node:fs';
import type { Static, TSchema } from '@sinclair/typebox';
import type * as comments from '../../gateway/schemas/comments';
import type * as events from '../../gateway/schemas/events';
import type * as insights from '../../gateway/schemas/insights';
import type * as messages from '../../gateway/schemas/messages';
import type * as prechecks from '../../gateway/schemas/prechecks';
import type * as publishing from '../../gateway/schemas/publishing';
import type * as seats from '../../gateway/schemas/seats';
import type * as shopCatalog from '../../gateway/schemas/shop-catalog';
import type * as videos from '../../gateway/schemas/videos';
import type * as webhookEndpoints from '../../gateway/schemas/webhook-endpoints';
import { API_TYPES_FILE, exportedSchemas, renderApiTypes } from '../../scripts/sdk-api-types';
import type { ApiTypes } from '../../sdk/api-types';

/** Each way assignable, with the same keys: a field missing, added, retyped or made optional differs. */
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A] extends [keyof B]
      ? [keyof B] extends [keyof A]
        ? true
        : false
      : false
    : false
  : false;

/** For every schema a module exports: does the generated type of that name match its Static? */
type Matches<M> = {
  [K in keyof M as M[K] extends TSchema ? K : never]: K extends keyof ApiTypes
    ? M[K] extends infer S extends TSchema
      ? Same<ApiTypes[K], Static<S>>
      : false
    : false;
};
type AllTrue<T> = T[keyof T] extends true ? true : T;

// A mismatch makes the checked value not `true`, which fails `npm run typecheck` naming the type.
const inStep: Array<true> = [
  true satisfies AllTrue<Matches<typeof comments>>,
  true satisfies AllTrue<Matches<typeof events>>,
  true satisfies AllTrue<Matches<typeof insights>>,
  true satisfies AllTrue<Matches<typeof messages>>,
  true satisfies AllTrue<Matches<typeof prechecks>>,
  true satisfies AllTrue<Matches<typeof publishing>>,
  true satisfies AllTrue<Matches<typeof seats>>,
  true satisfies AllTrue<Matches<typeof shopCatalog>>,
  true satisfies AllTrue<Matches<typeof videos>>,
  true satisfies AllTrue<Matches<typeof webhookEndpoints>>,
];

describe('sdk/api-types.ts', () => {
  it('is what the generator writes from the gateway schemas today (npm run generate:sdk-types)', () => {
    expect(fs.readFileSync(API_TYPES_FILE, 'utf8')).toBe(renderApiTypes());
  });

  it('names a type for every schema the SDK’s routes use', () => {
    const text = fs.readFileSync(API_TYPES_FILE, 'utf8');
    for (const [name] of exportedSchemas()) expect(text).toMatch(new RegExp(`^export type ${name} =`, 'm'));
    expect(inStep.every(Boolean)).toBe(true);
  });

  it('is imported by no module of the SDK from the server', () => {
    for (const file of fs.readdirSync('sdk').filter((f) => f.endsWith('.ts')))
      expect([file, fs.readFileSync(`sdk/${file}`, 'utf8')]).not.toEqual([file, expect.stringMatching(/from '\.\.\//)]);
  });
});
