import busboy from 'busboy';
import { TooLargeError, ValidationError } from '../domain/shared/errors.js';
import type { HttpRequest } from './types.js';

/** Image types an avatar or banner may have. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml'];

/**
 * The one file of a small buffered multipart/form-data body (an avatar, a story banner): the part
 * named `field`, at most `maxBytes`, an image. 400/413 say what to fix.
 */
export function imageFromMultipart(req: HttpRequest, field: string, maxBytes: number): Promise<{ bytes: Buffer; contentType: string }> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    return Promise.reject(new ValidationError(`Send the image as multipart/form-data with a file field "${field}".`));
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers as Record<string, string>, limits: { fileSize: maxBytes, files: 5, fields: 20 } });
    } catch (e) {
      reject(new ValidationError(`The multipart body cannot be read: ${(e as Error).message}`));
      return;
    }
    let found: { bytes: Buffer; contentType: string } | null = null;
    let failure: Error | null = null;
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => (failure = new TooLargeError(`${field}: the image is larger than ${maxBytes} bytes.`)));
      stream.on('end', () => {
        if (name !== field || found) return;
        const type = info.mimeType.toLowerCase();
        if (!IMAGE_TYPES.includes(type)) failure ??= new ValidationError(`${field}: send an image (${IMAGE_TYPES.join(', ')}), not ${type}.`);
        else found = { bytes: Buffer.concat(chunks), contentType: type };
      });
    });
    parser.on('error', (e: Error) => reject(new ValidationError(`The multipart body cannot be read: ${e.message}`)));
    parser.on('close', () => {
      if (failure) reject(failure);
      else if (!found) reject(new ValidationError(`${field}: the multipart body has no file field "${field}".`));
      else resolve(found);
    });
    parser.end(req.body);
  });
}
