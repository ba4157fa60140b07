package gatehouse.bench;

import org.platformlambda.core.annotations.PreLoad;
import org.platformlambda.core.models.AsyncHttpRequest;
import org.platformlambda.core.models.TypedLambdaFunction;

import java.util.HashMap;
import java.util.Map;

/**
 * The request echoed as JSON: the same fields as bench/src/baselines/mercury-functions/echo.ts,
 * so both sides do the same work per request.
 */
@PreLoad(route = "bench.echo", instances = 50)
public class Echo implements TypedLambdaFunction<AsyncHttpRequest, Map<String, Object>> {

    @Override
    public Map<String, Object> handleEvent(Map<String, String> headers, AsyncHttpRequest request, int instance) {
        Map<String, Object> result = new HashMap<>();
        result.put("method", request.getMethod());
        result.put("url", request.getUrl());
        result.put("headers", request.getHeaders());
        result.put("path_parameters", request.getPathParameters());
        result.put("query", request.getQueryParameters());
        result.put("body", request.getBody());
        return result;
    }
}
