import { newId } from '../../core/ids';
import { pollingHandleOf, publishHandleOf, recordIdOfHandle } from '../../core/publishing/handles';

describe('the publish handle', () => {
  it('names its record, and the record names it, for any record id', () => {
    const id = newId('pub');
    const handle = publishHandleOf(id);
    expect(handle).toMatch(/^vpsh_[0-9a-z]{26}$/);
    expect(recordIdOfHandle(handle)).toBe(id);
  });

  it.each([
    ['a record id', 'pub_01jabcdefghjkmnpqrstvwxyz0'],
    ['a library id', 'vid_01jabcdefghjkmnpqrstvwxyz0'],
    ['an official share id', 'v_pub_url~v1.7312345678901234567'],
    ['a shop video id', '7312345678901234567'],
    ['a handle of the wrong length', 'vpsh_01jabc'],
    ['a handle with upper case', 'vpsh_01JABCDEFGHJKMNPQRSTVWXYZ0'],
  ])('does not take %s for a handle', (_kind, value) => {
    expect(recordIdOfHandle(value)).toBeUndefined();
  });

  it('polls with the platform id once known, the handle until then', () => {
    const id = newId('pub');
    expect(pollingHandleOf({ id, shareId: null })).toBe(publishHandleOf(id));
    expect(pollingHandleOf({ id, shareId: 'v_pub_url~v1.1' })).toBe('v_pub_url~v1.1');
  });

  it('refuses to make a handle of an id that is not a publish record id', () => {
    expect(() => publishHandleOf('vid_01jabcdefghjkmnpqrstvwxyz0')).toThrow(/not a publish record id/);
  });
});
