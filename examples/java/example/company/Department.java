package example.company;

import java.util.HashSet;

public class Department {
    HashSet<Employee> departmentEmployees = new HashSet<>();
    Department associatedDepartment;
}
