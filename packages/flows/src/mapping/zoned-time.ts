/**
 * Calendar fields of an instant in a time zone (the system's by default), for the date plugins:
 * Java's ZonedDateTime.now(zone) and its ISO_DATE_TIME text (`2026-03-15T14:48:21.735-07:00[America/Los_Angeles]`).
 */
import { AppException } from '@gatehouse/functions';

export interface ZonedTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
  readonly offsetMinutes: number;
  readonly zone: string;
}

export function zonedTime(ms: number, zone?: string): ZonedTime {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      ...(zone === undefined ? {} : { timeZone: zone }),
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new AppException(500, `Unknown time-zone ID: ${zone}`);
  }
  const parts: Record<string, number> = {};
  for (const p of format.formatToParts(new Date(ms)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const millisecond = ((ms % 1000) + 1000) % 1000;
  const fields = {
    year: parts['year']!,
    month: parts['month']!,
    day: parts['day']!,
    hour: parts['hour']!,
    minute: parts['minute']!,
    second: parts['second']!,
    millisecond,
  };
  const asUtc = Date.UTC(
    fields.year,
    fields.month - 1,
    fields.day,
    fields.hour,
    fields.minute,
    fields.second,
    millisecond,
  );
  return {
    ...fields,
    offsetMinutes: Math.round((asUtc - ms) / 60000),
    zone: format.resolvedOptions().timeZone,
  };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Java's DateTimeFormatter.ISO_DATE_TIME of a ZonedDateTime. */
export function isoZoned(t: ZonedTime): string {
  const fraction = t.millisecond === 0 ? '' : `.${pad(t.millisecond, 3)}`;
  const abs = Math.abs(t.offsetMinutes);
  const offset =
    t.offsetMinutes === 0
      ? 'Z'
      : `${t.offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return (
    `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}` +
    `${fraction}${offset}[${t.zone}]`
  );
}
