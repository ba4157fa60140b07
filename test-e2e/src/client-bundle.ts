/** `@gatehouse/client`'s browser bundle as text, to serve to a page as `/client.js`. */
import { browserBundle } from '../../packages/client/scripts/browser-bundle.ts';

export async function buildClientBundle(): Promise<string> {
  return new TextDecoder().decode(await browserBundle());
}
