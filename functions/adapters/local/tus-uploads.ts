import { FileStore } from '@tus/file-store';
import { readdir } from 'node:fs/promises';
import { TusUploadsBase } from '../common/tus-uploads.js';

export { TUS_PREFIX } from '../common/tus-uploads.js';

/**
 * tus on the embedded runtime: @tus/file-store over the `tus/` folder of the uploads store
 * (`<id>` and `<id>.json`), so imports and assets read a finished upload as an ordinary blob.
 * The rules (scopes, ids, Upload-Metadata, onFinish) are the shared ones in TusUploadsBase.
 */
export class TusUploads extends TusUploadsBase {
  constructor(
    private readonly uploadsDir: string,
    options: { maxSize: number },
  ) {
    super(new FileStore({ directory: uploadsDir }), options);
  }

  protected async *uploadIds(): AsyncIterable<string> {
    let names: string[];
    try {
      names = await readdir(this.uploadsDir);
    } catch {
      return; // no upload was ever made
    }
    for (const name of names) {
      const id = /^([0-9a-f]{32})\.json$/.exec(name)?.[1];
      if (id) yield id;
    }
  }
}
