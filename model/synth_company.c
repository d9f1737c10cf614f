/* synth_company.c - the running example of the data-structure-roles paper
 * (§2.5, Listing 1, Figures 3 and 9), with the listing's classes and
 * field names:
 *
 *   class Company    { ArrayList<Department> departments;        // Company.java 9
 *                      LinkedList<Employee> allEmployees; }      // Company.java 10
 *   class Department { HashSet<Employee> departmentEmployees;    // Department.java 8
 *                      Department associatedDepartment; }
 *   class Employee   { String name; String email;
 *                      char[] accessRights; }                    // Employee.java 12: new char[4]
 *
 *   Main.generate(N):                                             // Main.java
 *     Company c = new Company();                                  // 20
 *     for d < D: c.departments.add(new Department());             // 23
 *     for e < N: Employee emp = new Employee("Employee " + e,
 *                                 "employee" + e + "@company.example");   // 27
 *                c.allEmployees.add(emp);                         // 28
 *                c.departments.get(e % D).departmentEmployees.add(emp);   // 29
 *     for d < D-1: dep[d].associatedDepartment = dep[d+1];        // 33
 *   Main.main: c = generate(N);  then G times { c.printReport(); System.gc(); }
 *
 * D = ceil(N/4).  The structure is complete before GC 1 and the same at
 * every GC; printReport leaves D StringBuilders with a byte[256] each as
 * garbage before every GC.
 */
#include "synth_world.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define REF HTR_FIELD_REF

static const struct sw_field_decl f_company[] = {
	{ "departments", "Ljava/util/ArrayList;", REF },
	{ "allEmployees", "Ljava/util/LinkedList;", REF },
};
static const struct sw_field_decl f_department[] = {
	{ "departmentEmployees", "Ljava/util/HashSet;", REF },
	{ "associatedDepartment", "Lexample/company/Department;", REF },
};
static const struct sw_field_decl f_employee[] = {
	{ "name", "Ljava/lang/String;", REF }, { "email", "Ljava/lang/String;", REF },
	{ "accessRights", "[C", REF },
};
#define CLASS(n, f) { n, "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f), f, 0 }
static const struct sw_type_decl decls[] = {
	CLASS("example.company.Company", f_company),
	CLASS("example.company.Department", f_department),
	CLASS("example.company.Employee", f_employee),
};

#define MAIN(l) { "example.company.Main", "main", "([Ljava/lang/String;)V", "Main.java", l }
#define GEN(l) { "example.company.Main", "generate", "(I)Lexample/company/Company;", "Main.java", l }
#define REPORT(l) { "example.company.Company", "printReport", "()V", "Company.java", l }

static const struct sw_frame fr_main = MAIN(8);
static const struct sw_frame s_company[] = { GEN(20), MAIN(8) };
static const struct sw_frame s_departments[] = {
	{ "example.company.Company", "<init>", "()V", "Company.java", 9 }, GEN(20), MAIN(8),
};
static const struct sw_frame s_employees_list[] = {
	{ "example.company.Company", "<init>", "()V", "Company.java", 10 }, GEN(20), MAIN(8),
};
static const struct sw_frame s_department[] = { GEN(23), MAIN(8) };
static const struct sw_frame s_dep_set_ctor[] = {
	{ "example.company.Department", "<init>", "()V", "Department.java", 8 }, GEN(23), MAIN(8),
};
static const struct sw_frame s_dep_add[] = { GEN(23), MAIN(8) };
static const struct sw_frame s_employee[] = { GEN(27), MAIN(8) };
static const struct sw_frame s_rights[] = {
	{ "example.company.Employee", "<init>", "(Ljava/lang/String;Ljava/lang/String;)V",
	  "Employee.java", 12 },
	GEN(27), MAIN(8),
};
static const struct sw_frame s_all_add[] = { GEN(28), MAIN(8) };
static const struct sw_frame s_set_add[] = { GEN(29), MAIN(8) };
static const struct sw_frame s_report_sb[] = { REPORT(40), MAIN(10) };
static const struct sw_frame s_report_bytes[] = { SWF_ASB_INIT, SWF_SB_INIT_CAP, REPORT(40), MAIN(10) };

struct co {
	uint64_t main;
	uint32_t t_employee, t_chars, t_sb, t_bytes;
	uint32_t s_name, s_email, s_rights, s_assoc, s_sb_value;
	uint32_t site_employee, site_rights, site_sb, site_sb_bytes;
	struct sw_strings strings;
	struct sw_arraylist_kind k_deps;
	struct sw_linkedlist_kind k_all;
	struct sw_hashset_kind k_set;
	struct sw_arraylist deps;
	struct sw_linkedlist all;
	struct sw_hashset *sets;   /* owned, [D] */
	uint32_t *dep_obj;         /* owned, [D] */
};

static void setup(struct sw *w, struct co *c, uint32_t present)
{
	c->t_employee = sw_type(w, "example.company.Employee");
	c->t_chars = sw_type(w, "char[]");
	c->t_sb = sw_type(w, "java.lang.StringBuilder");
	c->t_bytes = sw_type(w, "byte[]");
	c->s_name = sw_slot(w, c->t_employee, "name");
	c->s_email = sw_slot(w, c->t_employee, "email");
	c->s_rights = sw_slot(w, c->t_employee, "accessRights");
	c->s_assoc = sw_slot(w, sw_type(w, "example.company.Department"), "associatedDepartment");
	c->s_sb_value = sw_slot(w, c->t_sb, "value");
	c->site_employee = sw_site(w, s_employee, NF(s_employee), NULL, 0);
	c->site_rights = sw_site(w, s_rights, NF(s_rights), NULL, 0);
	c->site_sb = sw_site(w, s_report_sb, NF(s_report_sb), NULL, 0);
	c->site_sb_bytes = sw_site(w, s_report_bytes, NF(s_report_bytes), NULL, 0);
	sw_strings_init(w, &c->strings, SW_STRING_CONCAT, s_employee, NF(s_employee));
	sw_arraylist_kind_init(w, &c->k_deps, s_dep_add, NF(s_dep_add));
	sw_linkedlist_kind_init(w, &c->k_all, s_all_add, NF(s_all_add));
	sw_hashset_kind_init(w, &c->k_set, present, s_dep_set_ctor, NF(s_dep_set_ctor), s_set_add,
			     NF(s_set_add));
}

/* new Employee(name, email): `new` allocates the Employee before the
 * arguments are evaluated; the constructor allocates accessRights. */
static uint32_t new_employee(struct sw *w, struct co *c, uint64_t e)
{
	char name[48], email[64];
	snprintf(name, sizeof(name), "Employee %llu", (unsigned long long)e);
	snprintf(email, sizeof(email), "employee%llu@company.example", (unsigned long long)e);
	uint32_t emp = sw_new(w, c->t_employee, c->site_employee, c->main);
	uint32_t n = sw_string(w, &c->strings, name, c->main, NULL);
	uint32_t m = sw_string(w, &c->strings, email, c->main, NULL);
	uint32_t r = sw_new_array(w, c->t_chars, 4, c->site_rights, c->main);
	sw_put(w, emp, c->s_name, n);
	sw_put(w, emp, c->s_email, m);
	sw_put(w, emp, c->s_rights, r);
	return emp;
}

static int32_t identity_hash(struct sw *w)
{
	int32_t h = (int32_t)(sw_rng_next(&w->rng) & 0x7fffffff); /* 31-bit, as HotSpot */
	return h ? h : 1;
}

static uint32_t generate(struct sw *w, struct co *c, uint64_t n, uint64_t d)
{
	uint32_t t_company = sw_type(w, "example.company.Company");
	uint32_t company = sw_new(w, t_company, sw_site(w, s_company, NF(s_company), NULL, 0), c->main);
	sw_arraylist_new(w, &c->deps, &c->k_deps, sw_site(w, s_departments, NF(s_departments), NULL, 0),
			 c->main);
	sw_linkedlist_new(w, &c->all, &c->k_all,
			  sw_site(w, s_employees_list, NF(s_employees_list), NULL, 0), c->main);
	sw_put(w, company, sw_slot(w, t_company, "departments"), c->deps.obj);
	sw_put(w, company, sw_slot(w, t_company, "allEmployees"), c->all.obj);

	uint32_t t_dep = sw_type(w, "example.company.Department");
	uint32_t s_set = sw_slot(w, t_dep, "departmentEmployees");
	uint32_t site_dep = sw_site(w, s_department, NF(s_department), NULL, 0);
	for (uint64_t i = 0; i < d && !sw_failed(w); i++) {
		c->dep_obj[i] = sw_new(w, t_dep, site_dep, c->main);
		sw_hashset_new(w, &c->sets[i], &c->k_set, c->main);
		sw_put(w, c->dep_obj[i], s_set, c->sets[i].obj);
		sw_arraylist_add(w, &c->deps, c->dep_obj[i], c->main);
	}
	for (uint64_t e = 0; e < n && !sw_failed(w); e++) {
		uint32_t emp = new_employee(w, c, e);
		sw_linkedlist_add(w, &c->all, emp, c->main);
		sw_hashset_add(w, &c->sets[e % d], emp, identity_hash(w), c->main);
	}
	for (uint64_t i = 0; i + 1 < d; i++)
		sw_put(w, c->dep_obj[i], c->s_assoc, c->dep_obj[i + 1]);
	return company;
}

static void print_report(struct sw *w, struct co *c, uint64_t d)
{
	for (uint64_t i = 0; i < d && !sw_failed(w); i++) {
		uint32_t sb = sw_new(w, c->t_sb, c->site_sb, c->main);
		sw_put(w, sb, c->s_sb_value, sw_new_array(w, c->t_bytes, 256, c->site_sb_bytes, c->main));
	}
}

int synth_company(struct sw *w, const struct sw_scenario_params *p)
{
	static const char *const threads[] = { "main" };
	struct sw_baseline base;
	struct co c = { 0 };
	uint64_t d = (p->n + 3) / 4;
	sw_add_decls(w, decls, NF(decls));
	sw_baseline(w, &base, threads, 1, &fr_main, 0);
	c.main = base.thread_id[0];
	c.sets = calloc(d, sizeof(*c.sets));
	c.dep_obj = calloc(d, sizeof(*c.dep_obj));
	if (!c.sets || !c.dep_obj) {
		sw_fail(w, -ENOMEM, "out of memory for %llu departments", (unsigned long long)d);
		goto out;
	}
	/* HashSet.PRESENT, created when HashSet was initialised */
	uint32_t t_set = sw_type(w, "java.util.HashSet");
	uint32_t present = sw_new_preexisting(w, sw_type(w, "java.lang.Object"), -1, c.main);
	struct htr_root pr = { .kind = HTR_ROOT_STATIC, .object = present, .type = t_set,
			       .field = sw_field(w, t_set, "PRESENT") };
	sw_root_add(w, &pr);
	setup(w, &c, present);

	uint32_t company = generate(w, &c, p->n, d);
	struct htr_root r = { .kind = HTR_ROOT_LOCAL, .object = company, .thread = c.main,
			      .method = sw_method(w, &fr_main), .depth = 0, .slot = 1 };
	sw_root_add(w, &r);
	for (uint32_t k = 1; k <= p->g && !sw_failed(w); k++) {
		print_report(w, &c, d);
		sw_advance(w, 10000000); /* 10 ms of work between the collections */
		struct sw_gc_spec gc = { .cause = "System.gc()", .flags = HTR_GC_FULL };
		sw_gc(w, &gc, NULL);
	}
out:
	free(c.sets);
	free(c.dep_obj);
	return sw_status(w);
}
