import busboy from 'busboy';
import { TooLargeError, ValidationError } from '../domain/shared/errors.js';
import type { HttpRequest } from './types.js';

/** Image types an avatar or banner may have. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml'];

/** The image type of some bytes by their signature (clients often send images as application/octet-stream). */
function sniff(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

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
        const bytes = Buffer.concat(chunks);
        const declared = info.mimeType.toLowerCase();
        const type = declared === 'application/octet-stream' ? (sniff(bytes) ?? declared) : declared;
        if (!IMAGE_TYPES.includes(type)) failure ??= new ValidationError(`${field}: send an image (${IMAGE_TYPES.join(', ')}), not ${type}.`);
        else found = { bytes, contentType: type };
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
