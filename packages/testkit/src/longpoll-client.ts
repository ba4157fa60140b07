/** A long-polling test client that keeps its cookies as a browser would. */
export class LongPollClient {
  cookies = new Map<string, string>();
  private readonly url: string;
  constructor(url: string) {
    this.url = url;
  }
  async get(query = ''): Promise<{ status: number; body: unknown; text: string }> {
    const res = await fetch(`${this.url}/_gw/v1/connection/longpolling${query}`, {
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [k, v] = pair!.split('=');
      if (c.includes('Max-Age=0')) this.cookies.delete(k!);
      else this.cookies.set(k!, v ?? '');
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, text };
  }
  async poll(): Promise<Array<Record<string, unknown>>> {
    const r = await this.get();
    if (r.status !== 200) throw new Error(`poll answered ${r.status}: ${r.text}`);
    return (r.body as { events: Array<Record<string, unknown>> }).events;
  }
}
