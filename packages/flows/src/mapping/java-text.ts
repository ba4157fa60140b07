/**
 * The few Java/Mercury text conversions the mapping language is defined by (Utility.str2int and
 * friends, String.valueOf), so that values convert exactly as in Mercury: decimals truncated,
 * non-numeric text → -1, null printed as "null".
 */
import { isDataMap } from './data-path.ts';

/** Java's String.valueOf: null → "null", maps/lists in Java's toString shape, bytes as Base64-free text. */
export function javaText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return `[${value.map(javaText).join(', ')}]`;
  if (isDataMap(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}=${javaText(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}

const INTEGER = /^[+-]?\d+$/;

/** Utility.str2long: text before the first `.` (when not leading) parsed as an integer, else -1. */
export function str2long(text: string | null | undefined): number {
  if (text === null || text === undefined || text === '') return -1;
  const dot = text.indexOf('.');
  const whole = dot > 0 ? text.slice(0, dot) : text;
  if (!INTEGER.test(whole)) return -1;
  // Java's long range; beyond 2^53 the number itself is only the nearest double
  const big = BigInt(whole);
  return big > 9223372036854775807n || big < -9223372036854775808n ? -1 : Number(big);
}

/** Utility.str2int: as str2long, and -1 outside Java's int range (parseInt overflows). */
export function str2int(text: string | null | undefined): number {
  const n = str2long(text);
  return n > 2147483647 || n < -2147483648 ? -1 : n;
}

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?\s*$/;

/** Utility.str2double / str2float: Java's Double.parseDouble, else -1. */
export function str2double(text: string | null | undefined): number {
  if (text === null || text === undefined || text === '') return -1;
  if (!DECIMAL.test(text)) return -1;
  return Number.parseFloat(text.trim().replace(/[fFdD]$/, ''));
}

/** Utility.isNumeric: an optional leading `-` then digits only. */
export function isNumeric(text: string): boolean {
  const body = text.length > 1 && text.startsWith('-') ? text.slice(1) : text;
  return /^\d+$/.test(body);
}

/** Utility.split: split on any of `chars`, dropping empty parts. */
export function splitOn(text: string, chars: string): string[] {
  const out: string[] = [];
  let part = '';
  for (const c of text) {
    if (chars.includes(c)) {
      if (part !== '') out.push(part);
      part = '';
    } else {
      part += c;
    }
  }
  if (part !== '') out.push(part);
  return out;
}

/**
 * Utility.getDurationInSeconds: `<int><unit>` with unit s, m, h or d, or a bare integer (seconds);
 * anything unparsable gives -1 (times the unit).
 */
export function durationSeconds(text: string): number {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
  const unit = text.at(-1) ?? '';
  if (unit in units) return str2int(text.slice(0, -1).trim()) * units[unit]!;
  return str2int(text);
}

/** The Java class name Mercury prints for a value in its messages. */
export function javaTypeName(value: unknown): string {
  if (typeof value === 'string') return 'String';
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'Integer' : 'Double';
  if (Array.isArray(value)) return 'ArrayList';
  if (value instanceof Uint8Array) return 'byte[]';
  return 'HashMap';
}
