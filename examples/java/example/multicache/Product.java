package example.multicache;

import java.util.concurrent.ThreadLocalRandom;

public class Product {
    long id;
    String name;
    int[] data;

    Product(long id, String name) {
        this.id = id;
        this.name = name;
        data = new int[1 + ThreadLocalRandom.current().nextInt(8)];
    }
}
