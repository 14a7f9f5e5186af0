/**
 * The creator content endpoints' own error codes (official-api.md 8.3), one constructor per code.
 * The official pages list the codes but not their message strings, so the messages here are ours,
 * written in the platform's tone. These are business refusals, answered with HTTP 200 like other
 * application errors behind the gateway; the gateway-level refusals (signature, parameters, token)
 * keep the 4xx statuses of SHOP in official-error.ts.
 */
import { OfficialError } from '../official-error';

export const CREATOR = {
  anchorTitleTooLong: (max: number) => new OfficialError(16011007, `The product anchor title exceeds ${max} characters.`),
  anchorTitleCharacters: () => new OfficialError(16011069, 'The product anchor title cannot contain punctuation or emoji.'),
  productNotFound: (productId: string) => new OfficialError(170001011, `The product ${productId} does not exist.`),
  productUnavailable: (productId: string) => new OfficialError(170001012, `The product ${productId} is not available for this creator.`),
  notCreatorsVideo: () => new OfficialError(170001016, 'The video does not belong to this creator.'),
  precheckQuota: (limit: number) =>
    new OfficialError(170001019, `The daily precheck quota (${limit} per day) has been exceeded. Please try again tomorrow.`),
  coverTimestamp: () => new OfficialError(170001024, 'Invalid cover_timestamp_ms: it must point inside the video.'),
  invalidFileId: () =>
    new OfficialError(170001040, 'Invalid file id: the file does not exist, belongs to another creator or has already been used.'),
  postingQuota: (quota: string) => new OfficialError(170001062, `Posting quota exceeded (${quota}). Please try again tomorrow.`),
};
