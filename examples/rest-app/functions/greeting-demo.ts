/**
 * Flow task `greeting.demo` (the function Mercury's `greetings` test flow calls): answers its
 * mapped input with a greeting and the time. Set `exception` to a status to make it fail.
 * A flow task's input is its mapped body, not an HTTP request.
 */
import { AppException, defineFunction, type TaskBody } from '@gatehouse/functions';

export default defineFunction<TaskBody>({
  route: 'greeting.demo',
  handleEvent: (headers, body) => {
    const failure = Number(body['exception']);
    if (Number.isInteger(failure) && failure >= 400 && failure <= 599) {
      throw new AppException(failure, 'Simulated exception');
    }
    return { ...body, time: new Date().toISOString(), correlation: headers['my_correlation_id'] };
  },
});
