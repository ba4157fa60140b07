/**
 * The right-hand side of a mapping rule, parsed once into a Target. Input mappings write the
 * function's input (body keys, `*`, `header`, `header.<name>`), the model, or `ext:`; output
 * mappings write `output.*`, the model, `decision`, `file(...)` or `ext:`.
 */
import type { MappingKind } from './mapping-kind.ts';
import { fileDescriptor, type FileMode } from './mapping-source.ts';

export type Target =
  | { readonly type: 'model'; readonly path: string }
  | { readonly type: 'external'; readonly key: string }
  // input mapping
  | { readonly type: 'all' }
  | { readonly type: 'headers' }
  | { readonly type: 'header'; readonly name: string }
  | { readonly type: 'body'; readonly path: string }
  // output mapping
  | { readonly type: 'output'; readonly path: string }
  | { readonly type: 'status' }
  | { readonly type: 'outputHeaders' }
  | { readonly type: 'decision' }
  | { readonly type: 'file'; readonly mode: FileMode; readonly path: string };

export function parseTarget(text: string, kind: MappingKind): Target {
  if (text.startsWith('ext:')) return { type: 'external', key: text.slice(4).trim() };
  if (text.startsWith('model.')) return { type: 'model', path: text };
  if (kind === 'input') {
    if (text === '*') return { type: 'all' };
    if (text === 'header') return { type: 'headers' };
    if (text.startsWith('header.')) return { type: 'header', name: text.slice('header.'.length) };
    return { type: 'body', path: text };
  }
  if (text.startsWith('file(')) return { type: 'file', ...fileDescriptor(text) };
  if (text === 'output.status') return { type: 'status' };
  if (text === 'output.header') return { type: 'outputHeaders' };
  if (text === 'decision') return { type: 'decision' };
  return { type: 'output', path: text };
}
