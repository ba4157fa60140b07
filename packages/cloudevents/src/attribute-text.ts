/**
 * The characters the CloudEvents type system forbids in a String attribute (spec 1.0, "Type
 * System"): the control characters U+0000-U+001F and U+007F-U+009F, lone UTF-16 surrogates and the
 * Unicode noncharacters. Refusing them is also what keeps attribute values safe to put into
 * line-based framings: a CR or LF in `type` would otherwise end the SSE `event:` line and let a
 * producer forge frames in every subscriber's stream.
 */
const forbidden = /[\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}]/u;

/** The first forbidden character of the text as `U+000A` and its position, or undefined. */
export function forbiddenCharacter(text: string): { codePoint: string; index: number } | undefined {
  const hit = forbidden.exec(text);
  if (hit === null) return undefined;
  const codePoint = hit[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return { codePoint: `U+${codePoint}`, index: hit.index };
}
