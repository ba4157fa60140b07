/**
 * RFC 3339 `date-time` checking, stricter than `Date.parse` (which accepts "2024-02-30" and many
 * non-RFC forms): the grammar of RFC 3339 §5.6 plus the calendar, with a leap second allowed.
 */
const dateTime = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

export function isRfc3339Timestamp(text: string): boolean {
  const m = dateTime.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetOk = m[8] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 60 &&
    offsetOk
  );
}

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one; UTC avoids time-zone shifts.
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
