import { Type, type Static } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from './common';

export const SeatJson = Type.Object({
  id: Type.String(),
  name: Type.String(),
  platform: Type.Literal('vplat'),
  track: Type.Union([Type.Literal('video'), Type.Literal('shop')], {
    description: 'video: the account is a businessId; shop: a creatorUserOpenId',
  }),
  capabilityAccountId: Type.Union([Type.String(), Type.Null()], {
    description: 'businessId (video track) or creatorUserOpenId (shop track); null while unbound',
  }),
  accountUsername: Type.Union([Type.String(), Type.Null()]),
  bound: Type.Boolean(),
  boundAt: NullableTimestamp,
  authorizationStatus: Type.Union([Type.Literal('unbound'), Type.Literal('active'), Type.Literal('reauthorization_required')]),
  createdAt: Timestamp,
});
export type SeatJson = Static<typeof SeatJson>;
