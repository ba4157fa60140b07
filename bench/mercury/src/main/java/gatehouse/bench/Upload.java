package gatehouse.bench;

import org.platformlambda.core.annotations.PreLoad;
import org.platformlambda.core.models.AsyncHttpRequest;
import org.platformlambda.core.models.TypedLambdaFunction;
import org.platformlambda.core.system.FluxConsumer;
import reactor.core.publisher.Mono;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A multipart upload read to its last byte, answered with the file's name and size: the same work
 * as bench/src/baselines/mercury-functions/upload.ts. Mercury hands the file over as a stream,
 * Gatehouse as bytes, so each side reads it the way its platform offers.
 */
@PreLoad(route = "bench.upload", instances = 50)
public class Upload implements TypedLambdaFunction<AsyncHttpRequest, Mono<Map<String, Object>>> {

    @Override
    public Mono<Map<String, Object>> handleEvent(Map<String, String> headers, AsyncHttpRequest request, int instance) {
        if (!request.isValidStreams()) {
            throw new IllegalArgumentException("not a multipart upload");
        }
        String stream = request.getStreamRoutes().getFirst();
        String name = request.getFileNames().getFirst();
        return Mono.create(emitter -> {
            AtomicInteger size = new AtomicInteger();
            new FluxConsumer<byte[]>(stream, 10_000).consume(
                    block -> size.addAndGet(block.length),
                    emitter::error,
                    () -> emitter.success(Map.of("name", name, "size", size.get())));
        });
    }
}
