package example.buggystack;

public class TestObject {
    int id;

    TestObject(int id) { this.id = id; }
}
