/**
 * Content types of static files by extension, from the `mime-types` package (the mime-db list);
 * unknown extensions are served as bytes. Our one rule on top: text types say `charset=utf-8`, as
 * the files are read and served as UTF-8 (`mime-types`' own `contentType()` would also add it to
 * JSON, which the engine sends without a charset everywhere else).
 */
import { lookup } from 'mime-types';

export function mimeTypeOf(fileName: string): string {
  const type = lookup(fileName);
  if (type === false) return 'application/octet-stream';
  return type.startsWith('text/') ? `${type}; charset=utf-8` : type;
}
