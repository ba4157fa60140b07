package gatehouse.bench;

import org.platformlambda.core.annotations.MainApplication;
import org.platformlambda.core.models.EntryPoint;
import org.platformlambda.core.system.AutoStart;

/** Nothing to start by hand: REST automation and the flows come from the configuration. */
@MainApplication
public class MainApp implements EntryPoint {

    public static void main(String[] args) {
        AutoStart.main(args);
    }

    @Override
    public void start(String[] args) {
        // the platform loads the @PreLoad functions and rest.yaml itself
    }
}
