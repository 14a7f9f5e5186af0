/**
 * Minimal but well-formed progressive MP4 files for tests: ftyp, a movie header with one video
 * track (duration, picture size, an avc1 sample entry), and an mdat of the requested size, with
 * the moov before or after the media data as encoders write it.
 */
function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

const u32 = (...values: number[]) =>
  Buffer.concat(values.map((v) => Buffer.from([(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255])));
const u16 = (...values: number[]) => Buffer.concat(values.map((v) => Buffer.from([(v >>> 8) & 255, v & 255])));
const zeros = (n: number) => Buffer.alloc(n);
const fullBox = (type: string, flags: number, ...payload: Buffer[]) => box(type, u32(flags), ...payload);
const MATRIX = u32(0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000);

export interface Mp4Options {
  durationMs: number;
  width?: number;
  height?: number;
  /** Bytes of media data (zeros). */
  mdatBytes?: number;
  /** Where the movie header goes: first (fast start) or after the media data. */
  moov?: 'first' | 'last';
}

function moovBox(o: Required<Pick<Mp4Options, 'durationMs' | 'width' | 'height'>>): Buffer {
  const timescale = 1000;
  const mvhd = fullBox('mvhd', 0, u32(0, 0, timescale, o.durationMs, 0x00010000), u16(0x0100), zeros(10), MATRIX, zeros(24), u32(2));
  const tkhd = fullBox('tkhd', 3, u32(0, 0, 1, 0, o.durationMs), zeros(8), u16(0, 0, 0, 0), MATRIX, u32(o.width << 16, o.height << 16));
  const mdhd = fullBox('mdhd', 0, u32(0, 0, timescale, o.durationMs), u16(0x55c4, 0));
  const hdlr = fullBox('hdlr', 0, u32(0), Buffer.from('vide', 'latin1'), zeros(12), Buffer.from('VideoHandler\0', 'latin1'));
  const avcC = box('avcC', Buffer.from([1, 100, 0, 31, 0xff, 0xe0, 0]));
  const avc1 = box(
    'avc1',
    zeros(6),
    u16(1),
    zeros(16),
    u16(o.width, o.height),
    u32(0x00480000, 0x00480000, 0),
    u16(1),
    zeros(32),
    u16(0x18, 0xffff),
    avcC,
  );
  const stbl = box(
    'stbl',
    fullBox('stsd', 0, u32(1), avc1),
    fullBox('stts', 0, u32(0)),
    fullBox('stsc', 0, u32(0)),
    fullBox('stsz', 0, u32(0, 0)),
    fullBox('stco', 0, u32(0)),
  );
  const minf = box('minf', fullBox('vmhd', 1, zeros(8)), box('dinf', fullBox('dref', 0, u32(1), fullBox('url ', 1))), stbl);
  return box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, minf)));
}

export function mp4File(options: Mp4Options): Buffer {
  const o = { width: 1080, height: 1920, mdatBytes: 1024, moov: 'first' as const, ...options };
  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), u32(0x200), Buffer.from('isomiso2avc1mp41', 'latin1'));
  const moov = moovBox(o);
  const mdat = box('mdat', zeros(o.mdatBytes));
  return o.moov === 'first' ? Buffer.concat([ftyp, moov, mdat]) : Buffer.concat([ftyp, mdat, moov]);
}
