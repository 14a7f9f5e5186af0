/**
 * The event catalogue (core/events/event-types.ts) as the document's `webhooks`: one entry per type,
 * named by it, beside the generic push (`event`, openapi/push.ts) whose headers and answers each
 * one shares. An entry narrows the Event body to its type's `platform`, `type` and `event`, and
 * says what `data` holds, so a reader finds every event the service can send in one place.
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import { EVENT_CATALOGUE, eventNameOf, platformOf, type CatalogueEntry, type CatalogueType } from '../../core/events/event-types';
import { componentRef } from './components';
import { PUSH_WEBHOOKS } from './push';

/** `vplat.comment.visibility_changed` → receiveVplatCommentVisibilityChanged. */
export function catalogueOperationId(type: string): string {
  return `receive${type
    .split(/[._]/)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}`;
}

function describe(type: CatalogueType, row: CatalogueEntry): string {
  const origin = row.official
    ? `Pushed by the platform as \`${row.official}\`, which is its \`event\`.`
    : 'Made by the service itself: there is no official original, so its `event` is its type.';
  const former = row.formerly?.length
    ? ` Events stored before this name was settled carried ${row.formerly.map((n) => `\`${n}\``).join(', ')}; they are shown with today's name.`
    : '';
  const reach = row.test
    ? 'Sent only by POST /v1/webhook-endpoints/{id}/test, to that endpoint: no subscription matches it. GET /v1/events and the stream leave it out unless `includeTest=true` or `types` names it.'
    : `Subscribe with \`eventTypes\` ["${type}"]${platformOf(type) === 'vplat' ? ', ["vplat.*"]' : ''} or ["*"].`;
  return `${row.about}.\n\n${origin}${former}\n\n**data:** ${row.data}.\n\n${reach}`;
}

function entry(type: CatalogueType, row: CatalogueEntry): OpenAPIV3_1.PathItemObject {
  const push = PUSH_WEBHOOKS.event!.post!;
  return {
    post: {
      ...push,
      operationId: catalogueOperationId(type),
      summary: type,
      description: describe(type, row),
      tags: ['Events'],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              allOf: [componentRef('Event')],
              properties: {
                platform: { const: platformOf(type) },
                type: { const: type },
                event: { const: eventNameOf(type) },
                data: { type: 'object', description: row.data },
              },
            },
          },
        },
      },
    },
  };
}

export const CATALOGUE_WEBHOOKS: Record<string, OpenAPIV3_1.PathItemObject> = Object.fromEntries(
  (Object.entries(EVENT_CATALOGUE) as [CatalogueType, CatalogueEntry][]).map(([type, row]) => [type, entry(type, row)]),
);
