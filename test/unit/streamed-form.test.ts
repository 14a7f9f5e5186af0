/**
 * The streamed multipart body the shop uploads use: one file part whose bytes are passed on as they
 * come, framed exactly as a form builder frames them, with its length known when the file's is.
 */
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { streamedFileForm } from '../../core/upstream/streamed-form';

describe('streamedFileForm', () => {
  it('frames one file part around the bytes, in order, with the length the body really has', async () => {
    const chunks = [Buffer.from('first '), Buffer.from('second '), Buffer.from('third')];
    const form = streamedFileForm('data', { fileName: 'clip.mp4', contentType: 'video/mp4', stream: Readable.from(chunks), size: 18 });
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(form.contentType)![1]!;
    const body = (await buffer(form.body)).toString('latin1');
    expect(body).toBe(
      `--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="clip.mp4"\r\nContent-Type: video/mp4\r\n\r\n` +
        `first second third\r\n--${boundary}--\r\n`,
    );
    expect(form.contentLength).toBe(Buffer.byteLength(body, 'latin1'));
  });

  it('leaves the length unknown for a stream of unknown size, and takes a web stream too', async () => {
    const form = streamedFileForm('data', {
      fileName: 'a.webm',
      contentType: 'video/webm',
      stream: Readable.toWeb(Readable.from([Buffer.from('xyz')])) as never,
    });
    expect(form.contentLength).toBeUndefined();
    expect((await buffer(form.body)).toString()).toContain('\r\n\r\nxyz\r\n--');
  });

  it('cannot be broken out of by a file name: quotes and line breaks are percent-encoded', async () => {
    const form = streamedFileForm('data', {
      fileName: 'a"; name="other\r\nX-Injected: 1.mp4',
      contentType: 'video/mp4',
      stream: Readable.from([Buffer.from('v')]),
    });
    const head = (await buffer(form.body)).toString().split('\r\n\r\n')[0]!;
    expect(head).toContain('filename="a%22; name=%22other%0D%0AX-Injected: 1.mp4"');
    expect(head.split('\r\n')).toHaveLength(3);
  });

  it('uses a boundary of its own for every form', () => {
    const make = () => streamedFileForm('data', { fileName: 'f', contentType: 'video/mp4', stream: Readable.from([]) }).contentType;
    expect(make()).not.toBe(make());
  });
});
