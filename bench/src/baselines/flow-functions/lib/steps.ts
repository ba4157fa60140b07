/**
 * The work of the flows benchmark: three small steps and two branches, each a plain function so the
 * same code runs as flow tasks (one function per task) and chained inside one function.
 */
export type Body = Record<string, unknown>;

export const step1 = (b: Body): Body => ({ n: Number(b['n'] ?? 0) + 1, trail: 'a' });
export const step2 = (b: Body): Body => ({ n: Number(b['n']) * 2, trail: `${b['trail']}b` });
export const step3 = (b: Body): Body => ({ n: Number(b['n']) - 1, trail: `${b['trail']}c` });
export const left = (b: Body): Body => ({ sum: Number(b['n'] ?? 0) + 10 });
export const right = (b: Body): Body => ({ product: Number(b['n'] ?? 0) * 10 });
