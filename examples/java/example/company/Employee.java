package example.company;

public class Employee {
    String name;
    String email;
    char[] accessRights;

    Employee(String name, String email) {
        this.name = name;
        this.email = email;
        accessRights = new char[4];
    }
}
