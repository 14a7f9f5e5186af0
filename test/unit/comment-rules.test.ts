/**
 * The comment service's pure parts: the request rules (2001 naming the field) and the official
 * request each endpoint's field table builds from the service fields.
 */
import { ApiError } from '../../core/errors';
import { fromOfficial } from '../../core/upstream/mapping';
import {
  COMMENT_CREATE_FIELDS,
  COMMENT_HIDE_FIELDS,
  COMMENT_LIST_FIELDS,
  COMMENT_REPLY_CREATE_FIELDS,
  COMMENT_REPLY_LIST_FIELDS,
} from '../../core/upstream/vplat/comment-fields';
import {
  contentRules,
  firstProblem,
  listRules,
  MAX_COMMENT_TEXT,
  officialRequest,
  oneOf,
  required,
} from '../../core/services/comment.service';

const problem = (rules: Parameters<typeof firstProblem>[0]) => firstProblem(rules)?.message;

describe('comment request rules', () => {
  const noPaging = { status: '', sortField: '', sortOrder: '' };

  it('leaves every list parameter optional, and bounds maxCount to 1..30', () => {
    expect(problem(listRules(noPaging))).toBeUndefined();
    expect(problem(listRules({ ...noPaging, maxCount: 1 }))).toBeUndefined();
    expect(problem(listRules({ ...noPaging, maxCount: 30 }))).toBeUndefined();
    expect(problem(listRules({ ...noPaging, maxCount: 0 }))).toMatch(/^maxCount: /);
    expect(problem(listRules({ ...noPaging, maxCount: 31 }))).toMatch(/^maxCount: /);
    expect(problem(listRules({ ...noPaging, cursor: -1 }))).toMatch(/^cursor: /);
  });

  it('accepts only the official enumerations', () => {
    expect(problem(listRules({ ...noPaging, status: 'PUBLIC', sortField: 'create_time', sortOrder: 'smart' }))).toBeUndefined();
    expect(problem(listRules({ ...noPaging, status: 'public' }))).toMatch(/^status: must be one of PUBLIC, ALL/);
    expect(problem(listRules({ ...noPaging, sortField: 'views' }))).toMatch(/^sortField: /);
    expect(problem(listRules({ ...noPaging, sortOrder: 'up' }))).toMatch(/^sortOrder: /);
    expect(problem([oneOf('action', '', ['LIKE', 'UNLIKE'])])).toBe('action: must be one of LIKE, UNLIKE');
  });

  it('counts text in UTF-16 units up to 1,200', () => {
    const content = (text: string) => ({ text, imageUri: '' });
    expect(problem(contentRules(content('a'.repeat(MAX_COMMENT_TEXT))))).toBeUndefined();
    expect(problem(contentRules(content('a'.repeat(MAX_COMMENT_TEXT + 1))))).toBe('text: must be at most 1200 characters');
    expect(problem(contentRules(content('😀'.repeat(600))))).toBeUndefined();
    expect(problem(contentRules(content('😀'.repeat(601))))).toMatch(/^text: /);
  });

  it('asks for text, an image with its size, or (on a reply) an image URL', () => {
    expect(problem(contentRules({ text: '', imageUri: '' }))).toBe('text: text or imageUri is required');
    expect(problem(contentRules({ text: '', imageUri: 'img' }))).toBe('imageWidth: is required with imageUri');
    expect(problem(contentRules({ text: '', imageUri: 'img', imageWidth: 400 }))).toBe('imageHeight: is required with imageUri');
    expect(problem(contentRules({ text: '', imageUri: 'img', imageWidth: 400, imageHeight: 400 }))).toBeUndefined();
    expect(problem(contentRules({ text: '', imageUri: '' }, 'https://example.com/a.png'))).toBeUndefined();
  });

  it('reports 2001 with the field in data', () => {
    const err = firstProblem([required('videoId', '')]);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 2001, message: 'videoId: is required', options: { data: { field: 'videoId' } } });
  });
});

describe('official requests from the comment field tables', () => {
  it('sends given fields under their official names, with the seat as business_id', () => {
    const fields = {
      videoId: '7001',
      commentIds: ['1', '2'],
      includeReplies: true,
      status: '',
      sortField: 'likes',
      sortOrder: '',
      cursor: 20,
      maxCount: undefined,
    };
    expect(officialRequest(COMMENT_LIST_FIELDS, fields, 'biz-1')).toEqual({
      business_id: 'biz-1',
      video_id: '7001',
      comment_ids: ['1', '2'],
      include_replies: true,
      sort_field: 'likes',
      cursor: 20,
    });
  });

  it('leaves out empty strings and empty lists, so the platform applies its defaults', () => {
    expect(
      officialRequest(COMMENT_REPLY_LIST_FIELDS, { videoId: 'v', commentId: 'c', status: '', sortField: '', sortOrder: '' }, 'b'),
    ).toEqual({
      business_id: 'b',
      video_id: 'v',
      comment_id: 'c',
    });
    expect(officialRequest(COMMENT_LIST_FIELDS, { videoId: 'v', commentIds: [] }, 'b')).toEqual({ business_id: 'b', video_id: 'v' });
  });

  it('maps the content and the reply fields', () => {
    expect(
      officialRequest(
        COMMENT_REPLY_CREATE_FIELDS,
        { videoId: 'v', commentId: 'c', text: 'hi', imageUri: '', replyImageUrl: 'https://x/y.png' },
        'b',
      ),
    ).toEqual({
      business_id: 'b',
      video_id: 'v',
      comment_id: 'c',
      text: 'hi',
      reply_image_url: 'https://x/y.png',
    });
    expect(officialRequest(COMMENT_HIDE_FIELDS, { videoId: 'v', commentId: 'c', action: 'HIDE' }, 'b')).toEqual({
      business_id: 'b',
      video_id: 'v',
      comment_id: 'c',
      action: 'HIDE',
    });
  });

  it('flattens the answers: tabled names at the top, the joining rule inside comments', () => {
    const created = {
      comment_id: '1',
      video_id: '2',
      user_id: 'u',
      unique_identifier: 'q',
      create_time: '1700000000',
      text: 'hi',
      parent_comment_id: '0',
    };
    expect(fromOfficial(COMMENT_CREATE_FIELDS, created)).toEqual({
      commentId: '1',
      videoId: '2',
      userId: 'u',
      uniqueIdentifier: 'q',
      createTime: '1700000000',
      text: 'hi',
      parentCommentId: '0',
    });
    const page = { comments: [{ comment_id: '1', display_name: 'A', reply_list: [{ profile_image: 'p' }] }], cursor: 1, has_more: false };
    expect(fromOfficial(COMMENT_LIST_FIELDS, page)).toEqual({
      comments: [{ commentId: '1', displayName: 'A', replyList: [{ profileImage: 'p' }] }],
      cursor: 1,
      hasMore: false,
    });
  });
});
