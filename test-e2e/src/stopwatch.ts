/** Stages of a long test and how long each took, printed at the end (`${stopwatch}`). */
export function stopwatch() {
  const stages: string[] = [];
  let last = Date.now();
  return {
    lap(stage: string) {
      const now = Date.now();
      stages.push(`${stage} ${((now - last) / 1000).toFixed(1)} s`);
      last = now;
    },
    toString: () => stages.join(', '),
  };
}
