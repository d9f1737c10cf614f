package realapps.listenerleak;

import com.google.common.eventbus.EventBus;
import com.google.common.eventbus.Subscribe;
import java.io.IOException;
import realapps.Pause;

/*
 * TRUTH (written before heapfs was run on this program).
 *
 * Planted problem: a leak through a listener list.  Every price widget a
 * dashboard opens registers itself with the application's Guava EventBus,
 * held in the static field realapps.listenerleak.ListenerLeak.BUS; closing
 * a widget drops the application's reference but never calls
 * BUS.unregister, so the bus keeps every widget.
 *
 * Usage: ListenerLeak PHASES N.  Pause "base" after the bus is built and
 * one event was posted (so Guava's caches are warm), with no widget alive;
 * then, for k = 1..PHASES, N more widgets opened and closed, one event
 * posted, and pause "k".  At pause k exactly:
 *   - k*N instances of realapps.listenerleak.ListenerLeak$Widget (0 at
 *     "base"), each holding one double[16] that nothing else references:
 *     Widget = 12-byte header + long + double + 1 reference = 32 bytes,
 *     double[16] = 16 + 128 = 144: the widgets retain k*N*176 bytes;
 *   - the only path to them: static ListenerLeak.BUS (EventBus) ->
 *     SubscriberRegistry -> ConcurrentHashMap -> ... -> CopyOnWriteArraySet
 *     -> CopyOnWriteArrayList -> Object[] (the accumulation point: k*N
 *     elements) -> Subscriber$SynchronizedSubscriber (k*N of them) ->
 *     Widget;
 *   - no widget is ever freed.
 * suspects must name: ListenerLeak$Widget (k*N instances, k*N*176 bytes
 * retained), the Object[] of the listener list, and the root static
 * realapps.listenerleak.ListenerLeak.BUS.
 */
public final class ListenerLeak {
    /** What the bus carries. */
    public static final class PriceChanged {
        final double price;

        PriceChanged(double price) {
            this.price = price;
        }
    }

    /** A listener: registered when opened, never unregistered. */
    public static final class Widget {
        final long id;
        double last;
        final double[] history = new double[16];

        Widget(long id) {
            this.id = id;
        }

        @Subscribe
        public void onPrice(PriceChanged e) {
            last = e.price;
            history[(int) (id % 16)] = e.price;
        }
    }

    static final EventBus BUS = new EventBus("prices");

    public static void main(String[] args) throws IOException {
        int phases = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        BUS.post(new PriceChanged(1.0));
        Pause.point("base");
        long id = 0;
        for (int k = 1; k <= phases; k++) {
            for (int i = 0; i < n; i++) {
                Widget w = new Widget(id++);
                BUS.register(w);   // opened
                // ... and closed: the dashboard forgets it, the bus does not
            }
            BUS.post(new PriceChanged(100.0 + k));
            System.out.println("planted " + k + " realapps.listenerleak.ListenerLeak$Widget " + id);
            Pause.point(Integer.toString(k));
        }
    }
}
