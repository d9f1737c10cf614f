package example.gcstress;

public class Task {
    final long id;
    final long[] payload;

    Task(long id) {
        this.id = id;
        payload = new long[8];
    }
}
