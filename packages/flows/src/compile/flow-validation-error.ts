/**
 * A rule of Mercury's flow compiler was broken. `message` is Mercury's own text (tests and users
 * match on it); `flow` and `task` say where, for the start-up log.
 */
export class FlowValidationError extends Error {
  readonly flow: string | undefined;
  readonly task: string | undefined;

  constructor(message: string, where: { flow?: string; task?: string } = {}) {
    super(message);
    this.name = 'FlowValidationError';
    this.flow = where.flow;
    this.task = where.task;
  }
}
