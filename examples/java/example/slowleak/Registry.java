package example.slowleak;

import java.util.ArrayList;

public class Registry {
    static final ArrayList<Session> sessions = new ArrayList<>();

    static void open(long id) {
        sessions.add(new Session(id));
    }

    static int size() { return sessions.size(); }
}
