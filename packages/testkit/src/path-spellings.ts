/**
 * Spellings of a path that one reader may take for it and another may not: what an attacker tries
 * against a path check. Used by the differential path tests, which compare what the gateway decided
 * for each spelling with how the component behind it reads that spelling.
 */

/** Every spelling of `base` an attacker would try: case, escapes, slashes, dots, overlong UTF-8. */
export function spellings(base: string, extra = 200): string[] {
  const out = new Set<string>([base]);
  const segments = base.split('/').slice(1);
  // Case, per segment and all at once.
  segments.forEach((s, i) => {
    for (const variant of [s.toUpperCase(), s[0]!.toUpperCase() + s.slice(1), swapCase(s)])
      out.add(`/${segments.map((t, j) => (j === i ? variant : t)).join('/')}`);
  });
  out.add(base.toUpperCase());
  // Each character percent-encoded, lower- and upper-case hex.
  for (let i = 1; i < base.length; i++) {
    const hex = base.charCodeAt(i).toString(16).padStart(2, '0');
    for (const h of [hex, hex.toUpperCase()]) out.add(`${base.slice(0, i)}%${h}${base.slice(i + 1)}`);
  }
  // Each slash replaced by what an upstream may read as one, or preceded by dot segments.
  const slashForms = [
    '//',
    '///',
    '%2f',
    '%2F',
    '%5c',
    '%5C',
    '\\',
    '/\\',
    '/./',
    '/%2e/',
    '/%2E/',
    '/z/../',
    '/z/%2e%2e/',
    '/z/.%2e/',
    '/z/%2e./',
    '/z/%2E%2E/',
    '/z/..%2f',
    '/z/..%5c',
    '/%c0%ae/',
    '/z/%c0%ae%c0%ae/',
    '%c0%af',
    '%e0%80%af',
    '/z/%252e%252e/',
    '/;/',
  ];
  for (let i = 0; i < base.length; i++) {
    if (base[i] !== '/') continue;
    for (const form of slashForms) out.add(base.slice(0, i) + form + base.slice(i + 1));
  }
  // Letters another script or a compatibility form folds to: a reader that lower-cases with
  // Unicode rules reads KELVIN SIGN (U+212A) as `k`; LONG S, dotted capital I and fullwidth forms
  // fold elsewhere but are tried all the same.
  for (let i = 1; i < base.length; i++) {
    const c = base[i]!;
    const forms = lookalikes[c.toLowerCase()] ?? [];
    const fullwidth = /[A-Za-z]/.test(c)
      ? [encodeURIComponent(String.fromCharCode(c.charCodeAt(0) + 0xfee0))]
      : [];
    for (const form of [...forms, ...fullwidth].slice(0, 3))
      out.add(base.slice(0, i) + form + base.slice(i + 1));
  }
  // Overlong forms of letters, NUL, params, trailing forms.
  out.add(base.replace('e', '%c1%a5'));
  for (const suffix of [
    '/',
    '//',
    '/.',
    '/..',
    '/./',
    '%00',
    '%2500',
    ';x=1',
    '%3b',
    '%20',
    '%09',
    '#f',
    '%23',
    '.',
    '..',
    '~',
  ])
    out.add(base + suffix);
  for (let i = 1; i < segments.length; i++)
    out.add(`/${segments.map((t, j) => (j === i - 1 ? `${t};p=1` : t)).join('/')}`);
  // Pairs of the above, chosen by a fixed seed so a failure reproduces.
  const singles = [...out];
  let seed = 0x5eed;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  for (let n = 0; n < extra; n++) {
    const a = singles[next() % singles.length]!;
    const b = singles[next() % singles.length]!;
    // Splice b's differing middle into a: a cheap way to combine two spellings.
    const cut = next() % Math.min(a.length, b.length);
    out.add(a.slice(0, cut) + b.slice(cut));
  }
  return [...out];
}

/** Non-ASCII characters whose Unicode case mapping or folding lands on an ASCII letter. */
const lookalikes: Record<string, string[]> = {
  k: ['%E2%84%AA', '%e2%84%aa'],
  s: ['%C5%BF'],
  i: ['%C4%B0', '%C4%B1'],
};

function swapCase(s: string): string {
  return [...s].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('');
}
