package example.company;

/* The data-structure-roles paper's running example (§2.5, Listing 1).
 * Usage: Main [employees [gcs]]; prints what it constructed. */
public class Main {
    /* The company stays reachable after main returns: a recorder that walks
     * the heap after the last GC (the agent does when the program triggers
     * GCs faster than it can walk them) still finds it. */
    static Company company;

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int g = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Company c = generate(n);
        company = c;
        for (int k = 0; k < g; k++) {
            c.printReport();
            System.gc();
        }
        System.out.println("employees=" + c.allEmployees.size());
        System.out.println("departments=" + c.departments.size());
        System.out.println("gcs=" + g);
    }

    static Company generate(int n) {
        Company c = new Company();
        int d = (n + 3) / 4;
        for (int i = 0; i < d; i++)
            c.departments.add(new Department());
        for (int e = 0; e < n; e++) {
            Employee emp = new Employee("Employee " + e, "employee" + e + "@company.example");
            c.allEmployees.add(emp);
            c.departments.get(e % d).departmentEmployees.add(emp);
        }
        for (int i = 0; i < d - 1; i++)
            c.departments.get(i).associatedDepartment = c.departments.get(i + 1);
        return c;
    }
}
