/** The blacklist service's settings (environment variables; defaults documented in the README). */
import { duration, type Field, int } from '@gatehouse/service-kit';

/** Ten years: far beyond any token lifetime, and well inside what Redis accepts for PX. */
const validityCeiling = 10 * 365 * 24 * 3600;

export const blacklistConfig = {
  BLACKLIST_MAX_VALIDITY: int(
    'longest accepted validityInSeconds, in seconds (400 beyond)',
    365 * 24 * 3600,
    { min: 1, max: validityCeiling },
  ),
  BLACKLIST_COUNT_MAX_AGE: duration(
    'the entries gauge is recounted at a scrape after a change, or when it is older than this',
    '60s',
    { min: '1s' },
  ),
  BLACKLIST_V1_SUNSET: httpDate(
    'date announced in the Sunset header of the deprecated /v1/session-blacklist',
    '2027-06-30',
  ),
};

/** A calendar date or timestamp that Date understands; shown as an HTTP-date. */
function httpDate(description: string, fallback: string): Field<Date> {
  return {
    description,
    defaultText: `\`${fallback}\``,
    parse(raw) {
      const date = new Date(raw ?? fallback);
      if (Number.isNaN(date.getTime())) throw new Error('must be a date such as 2027-06-30');
      return date;
    },
  };
}
