package example.company;

import java.util.ArrayList;
import java.util.LinkedList;

public class Company {
    ArrayList<Department> departments = new ArrayList<>();
    LinkedList<Employee> allEmployees = new LinkedList<>();

    void printReport() {
        for (Department d : departments) {
            StringBuilder sb = new StringBuilder(256);
            sb.append(d.departmentEmployees.size()).append(" employees");
            if (sb.length() == 0)
                System.out.println(sb);
        }
    }
}
