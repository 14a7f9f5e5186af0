/** Reading the Business API's multipart uploads (comment images, message media). */
import type { FastifyRequest } from 'fastify';
import { OfficialError } from '../official-error';

export interface UploadedFile {
  bytes: Buffer;
  filename: string;
  mimetype: string;
}

/** A multipart request's text fields and files, read whole (the official limits are a few MB). */
export async function readMultipart(
  request: FastifyRequest,
): Promise<{ fields: Record<string, string>; files: Record<string, UploadedFile> }> {
  if (!request.isMultipart()) throw new OfficialError(40000, 'The request must be multipart/form-data.');
  const fields: Record<string, string> = {};
  const files: Record<string, UploadedFile> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') files[part.fieldname] = { bytes: await part.toBuffer(), filename: part.filename, mimetype: part.mimetype };
    else fields[part.fieldname] = String(part.value);
  }
  return { fields, files };
}
