/** A one-pixel PNG and the multipart body that sends it, for the avatar and banner routes. */
export const ONE_PIXEL_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** `bytes` as the file field `field` of a multipart/form-data body (rawBody and headers of a request). */
export function multipartFile(field: string, bytes: Buffer, type: string): { rawBody: Buffer; headers: Record<string, string> } {
  const boundary = '----ldp-test-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="image.png"\r\nContent-Type: ${type}\r\n\r\n`;
  return { rawBody: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
