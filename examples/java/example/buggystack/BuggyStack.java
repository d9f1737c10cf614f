package example.buggystack;

import java.util.Arrays;

/* Effective Java's stack whose pop() does not null the popped slot. */
public class BuggyStack {
    private Object[] elements;
    private int size;
    private static final int DEFAULT_INITIAL_CAPACITY = 16;

    public BuggyStack() {
        elements = new Object[DEFAULT_INITIAL_CAPACITY];
    }

    public void push(Object e) {
        ensureCapacity();
        elements[size++] = e;
    }

    public Object pop() {
        if (size == 0)
            throw new IllegalStateException("empty");
        return elements[--size]; // the bug: the slot keeps its reference
    }

    public int size() { return size; }

    private void ensureCapacity() {
        if (elements.length == size)
            elements = Arrays.copyOf(elements, 2 * size + 1);
    }
}
