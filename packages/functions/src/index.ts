export * from './app-exception.ts';
export * from './async-http-request.ts';
export * from './define-function.ts';
export * from './event-envelope.ts';
