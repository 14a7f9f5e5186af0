import { Type, type Static } from '@sinclair/typebox';
import { PRECHECK_STATUSES } from '../../core/vocabulary';
import { ANCHOR_TEXT_MAX_CHARACTERS } from '../../core/publishing/anchor-text';
import { NullableTimestamp, Timestamp } from './common';

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Verdict = (description: string) => Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Null()], { description });

export const SubmitPrecheckBody = Type.Object(
  {
    accountId: Type.String({ minLength: 1, maxLength: 200, description: 'The bound shop account (creatorUserOpenId)' }),
    fileId: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'A file id from a shop track upload (POST /v1/videos); a pre-check does not consume it',
    }),
    productId: Type.String({ minLength: 1, maxLength: 200, description: 'The product to link (POST /v1/products/query)' }),
    // Characters are counted as code points by core; the bound here only stops oversized input.
    productTitle: Type.String({
      minLength: 1,
      maxLength: ANCHOR_TEXT_MAX_CHARACTERS * 8,
      description: `The anchor text: at most ${ANCHOR_TEXT_MAX_CHARACTERS} characters, no punctuation or emoji`,
    }),
  },
  { additionalProperties: false },
);
export type SubmitPrecheckBody = Static<typeof SubmitPrecheckBody>;

export const PrecheckIdParams = Type.Object(
  { taskId: Type.String({ minLength: 1, maxLength: 64, description: 'The taskId of the pre-check response (pre_…)' }) },
  { additionalProperties: false },
);
export type PrecheckIdParams = Static<typeof PrecheckIdParams>;

export const PrecheckJson = Type.Object({
  taskId: Type.String({ description: "The service's pre-check id, for GET /v1/publish/tts/precheck/{taskId}" }),
  officialTaskId: Nullable(Type.String({ description: "The shop's task id, once the shop accepted the pre-check" })),
  status: literals(
    PRECHECK_STATUSES,
    'submitted: on its way to the shop; processing: the shop is checking; passed, failed (see violation, quality, issues), service_error (see reason)',
  ),
  violation: Verdict('The violation dimension: passed or failed; null until known'),
  quality: Verdict('The quality dimension: passed or failed; null until known'),
  issues: Type.Array(
    Type.Object({ dimension: Type.Union([Type.Literal('violation'), Type.Literal('quality')]) }, { additionalProperties: true }),
    {
      description: "The shop's issues and suggestions, flattened, each with its dimension",
    },
  ),
  reason: Nullable(Type.String({ description: 'Why it failed, or could not be checked' })),
  seatId: Type.String(),
  accountId: Type.String(),
  fileId: Type.String(),
  videoId: Type.String({ description: 'The video library record of the file' }),
  productId: Type.String(),
  productTitle: Type.String(),
  workflowId: Type.String({ description: 'The Temporal workflow following the pre-check' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: NullableTimestamp,
});
export type PrecheckJson = Static<typeof PrecheckJson>;
