export * from './dependencies.ts';
export * from './wait-for.ts';
