package example.slowleak;

public class Session {
    final long id;
    final byte[] state;

    Session(long id) {
        this.id = id;
        state = new byte[64];
    }
}
