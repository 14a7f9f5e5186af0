import { VIDEO_PUBLISH_FIELDS, SHOP_PUBLISH_FIELDS } from '../../core/upstream/field-tables';
import { flattenOfficial, fromOfficial, toOfficial } from '../../core/upstream/mapping';

describe('field mapping', () => {
  it('builds the official video publish body from the spec table', () => {
    const body = toOfficial(
      VIDEO_PUBLISH_FIELDS,
      {
        videoUrl: 'https://v.example/a.mp4',
        caption: 'hi',
        isBrandOrganic: true,
        isBrandedContent: false,
        disableDuet: true,
        thumbnailOffset: 1500,
      },
      { business_id: 'b1' },
    );
    expect(body).toEqual({
      business_id: 'b1',
      video_url: 'https://v.example/a.mp4',
      post_info: { caption: 'hi', is_brand_organic: true, is_branded_content: false, disable_duet: true, thumbnail_offset: 1500 },
    });
  });

  it('maps the shop publish fields into video_info and product_link_info', () => {
    expect(
      toOfficial(SHOP_PUBLISH_FIELDS, { fileId: 'f', title: 't', productId: 'p', productTitle: 'Anchor', musicId: undefined }),
    ).toEqual({
      video_info: { file_id: 'f', title: 't' },
      product_link_info: { product_id: 'p', title: 'Anchor' },
    });
  });

  it('reads a table in the other direction with the same names', () => {
    const official = { video_info: { file_id: 'f', cover_uri: 'c' }, product_link_info: { product_id: 'p', title: 'A' } };
    expect(fromOfficial(SHOP_PUBLISH_FIELDS, official)).toEqual({ fileId: 'f', coverUri: 'c', productId: 'p', productTitle: 'A' });
  });

  it('round-trips every tabled field', () => {
    const fields = Object.fromEntries(VIDEO_PUBLISH_FIELDS.map(([service], i) => [service, `v${i}`]));
    expect(fromOfficial(VIDEO_PUBLISH_FIELDS, toOfficial(VIDEO_PUBLISH_FIELDS, fields))).toEqual(fields);
  });

  it('flattens untabled nested fields by joining their keys, into arrays too', () => {
    expect(
      flattenOfficial({
        message_id: 'm',
        text: { body: 'hello' },
        from_user: { id: 'u', role: 'PERSONAL_ACCOUNT' },
        reactions: [{ ai_emoji_url: 'x', unique_identifier: 'y' }],
        message_tag: {},
      }),
    ).toEqual({
      messageId: 'm',
      textBody: 'hello',
      fromUserId: 'u',
      fromUserRole: 'PERSONAL_ACCOUNT',
      reactions: [{ aiEmojiUrl: 'x', uniqueIdentifier: 'y' }],
      messageTag: {},
    });
  });
});
