/* synth_multicache.c - the gc-roots paper's multi-cache demo (§5.1): every
 * Product is kept alive by two static caches at once, the HashMap in
 * IdCache.byId (java.lang.Long keys) and the HashMap in NameCache.byName
 * (keyed by the Product's own name String).  Neither map dominates a
 * Product; only the two together keep them alive.
 *
 * The Java being simulated (line numbers as in the allocation sites):
 *
 *   class Main { main(String[] args) {
 *       IdCache.init(); NameCache.init();                         // 10
 *       for (i..2) new Thread(new Loader(i), "loader-" + i);      // 11
 *       ... }}
 *   class IdCache   { static HashMap<Long, Product> byId = new HashMap<>();      // 12
 *                     static void put(Product p) { byId.put(p.id, p); } }        // 17
 *   class NameCache { static HashMap<String, Product> byName = new HashMap<>();  // 12
 *                     static void put(Product p) { byName.put(p.name, p); } }    // 17
 *   class Loader implements Runnable {
 *     Product load(long id) {
 *       String name = new StringBuilder(24).append("product-").append(id).toString(); // 28
 *       Product p = new Product(id, name);                                      // 30
 *       IdCache.put(p);                                                         // 31
 *       NameCache.put(p);                                                       // 32
 *       return p; }
 *     public void run() { while (..) load(nextId()); }                          // 22
 *   }
 *   class Product { long id; String name; int[] data;
 *     Product(long id, String name) { ...; data = new int[1 + rnd.nextInt(8)]; } } // 15
 *
 * -n N: exactly N Products at the last GC; GC k (1..G) sees the first
 * floor(N*k/G) Products.  GC G is System.gc() (full), the others young.
 */
#include "synth_world.h"

#include <stdio.h>

#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define REF HTR_FIELD_REF
#define STA HTR_FIELD_STATIC
#define FIRST_PRODUCT_ID 1000000ull
#define NLOADERS 2

static const struct sw_field_decl f_product[] = {
	{ "id", "J", 0 }, { "name", "Ljava/lang/String;", REF }, { "data", "[I", REF },
};
static const struct sw_field_decl f_idcache[] = {
	{ "byId", "Ljava/util/HashMap;", STA | REF },
};
static const struct sw_field_decl f_namecache[] = {
	{ "byName", "Ljava/util/HashMap;", STA | REF },
};
static const struct sw_field_decl f_loader[] = {
	{ "loaded", "J", 0 }, { "index", "I", 0 },
};
#define CLASS(n, f) { n, "java.lang.Object", HTR_TYPE_INSTANCE, 0, NF(f), f, 0 }
static const struct sw_type_decl decls[] = {
	CLASS("example.multicache.Product", f_product),
	CLASS("example.multicache.IdCache", f_idcache),
	CLASS("example.multicache.NameCache", f_namecache),
	CLASS("example.multicache.Loader", f_loader),
};

#define MAIN(l) { "example.multicache.Main", "main", "([Ljava/lang/String;)V", "Main.java", l }
#define RUN { "example.multicache.Loader", "run", "()V", "Loader.java", 22 }
#define LOAD(l) { "example.multicache.Loader", "load", "(J)Lexample/multicache/Product;", \
		  "Loader.java", l }

static const struct sw_frame fr_main = MAIN(14);
static const struct sw_frame fr_run = RUN;
static const struct sw_frame s_byid[] = {
	{ "example.multicache.IdCache", "<clinit>", "()V", "IdCache.java", 12 }, MAIN(10),
};
static const struct sw_frame s_byname[] = {
	{ "example.multicache.NameCache", "<clinit>", "()V", "NameCache.java", 12 }, MAIN(10),
};
static const struct sw_frame s_loader[] = { MAIN(11) };
static const struct sw_frame s_name[] = { LOAD(28), RUN, SWF_THREAD_RUN };
static const struct sw_frame s_builder[] = { LOAD(28), RUN, SWF_THREAD_RUN };
static const struct sw_frame s_builder_bytes[] = {
	SWF_ASB_INIT, SWF_SB_INIT_CAP, LOAD(28), RUN, SWF_THREAD_RUN,
};
static const struct sw_frame s_product[] = { LOAD(30), RUN, SWF_THREAD_RUN };
static const struct sw_frame s_data[] = {
	{ "example.multicache.Product", "<init>", "(JLjava/lang/String;)V", "Product.java", 15 },
	LOAD(30), RUN, SWF_THREAD_RUN,
};
static const struct sw_frame s_long[] = {
	SWF_LONG_VALUEOF,
	{ "example.multicache.IdCache", "put", "(Lexample/multicache/Product;)V", "IdCache.java", 17 },
	LOAD(31), RUN, SWF_THREAD_RUN,
};
static const struct sw_frame s_put_byid[] = {
	{ "example.multicache.IdCache", "put", "(Lexample/multicache/Product;)V", "IdCache.java", 17 },
	LOAD(31), RUN, SWF_THREAD_RUN,
};
static const struct sw_frame s_put_byname[] = {
	{ "example.multicache.NameCache", "put", "(Lexample/multicache/Product;)V", "NameCache.java", 17 },
	LOAD(32), RUN, SWF_THREAD_RUN,
};

struct mc {
	uint32_t t_product, t_builder, t_bytes, t_ints, t_long;
	uint32_t s_name, s_data, s_builder_value;
	uint32_t site_builder, site_builder_bytes, site_product, site_data, site_long;
	struct sw_strings names;
	struct sw_hashmap_kind k_byid, k_byname;
	struct sw_hashmap by_id, by_name;
	struct sw_baseline base;
};

static void setup(struct sw *w, struct mc *m)
{
	static const char *const threads[] = { "main", "loader-1", "loader-2" };
	sw_add_decls(w, decls, NF(decls));
	sw_baseline(w, &m->base, threads, NF(threads), &fr_main, 0);
	m->t_product = sw_type(w, "example.multicache.Product");
	m->t_builder = sw_type(w, "java.lang.StringBuilder");
	m->t_bytes = sw_type(w, "byte[]");
	m->t_ints = sw_type(w, "int[]");
	m->t_long = sw_type(w, "java.lang.Long");
	m->s_name = sw_slot(w, m->t_product, "name");
	m->s_data = sw_slot(w, m->t_product, "data");
	m->s_builder_value = sw_slot(w, m->t_builder, "value");
	m->site_builder = sw_site(w, s_builder, NF(s_builder), NULL, 0);
	m->site_builder_bytes = sw_site(w, s_builder_bytes, NF(s_builder_bytes), NULL, 0);
	m->site_product = sw_site(w, s_product, NF(s_product), NULL, 0);
	m->site_data = sw_site(w, s_data, NF(s_data), NULL, 0);
	m->site_long = sw_site(w, s_long, NF(s_long), NULL, 0);
	sw_strings_init(w, &m->names, SW_STRING_BUILDER, s_name, NF(s_name));
	sw_hashmap_kind_init(w, &m->k_byid, s_put_byid, NF(s_put_byid));
	sw_hashmap_kind_init(w, &m->k_byname, s_put_byname, NF(s_put_byname));
}

/* Class initialisation and the loader threads, on main. */
static void start(struct sw *w, struct mc *m)
{
	uint64_t main = m->base.thread_id[0];
	uint32_t t_idcache = sw_type(w, "example.multicache.IdCache");
	uint32_t t_namecache = sw_type(w, "example.multicache.NameCache");
	uint32_t t_loader = sw_type(w, "example.multicache.Loader");
	uint32_t s_target = sw_slot(w, sw_type(w, "java.lang.Thread"), "target");
	uint32_t site_byid = sw_site(w, s_byid, NF(s_byid), NULL, 0);
	uint32_t site_byname = sw_site(w, s_byname, NF(s_byname), NULL, 0);
	uint32_t site_loader = sw_site(w, s_loader, NF(s_loader), NULL, 0);

	sw_hashmap_new(w, &m->by_id, &m->k_byid, site_byid, main);
	struct htr_root r = { .kind = HTR_ROOT_STATIC, .object = m->by_id.obj, .type = t_idcache,
			      .field = sw_field(w, t_idcache, "byId") };
	sw_root_add(w, &r);
	sw_hashmap_new(w, &m->by_name, &m->k_byname, site_byname, main);
	r.object = m->by_name.obj;
	r.type = t_namecache;
	r.field = sw_field(w, t_namecache, "byName");
	sw_root_add(w, &r);

	uint32_t run = sw_method(w, &fr_run);
	for (uint32_t i = 1; i <= NLOADERS; i++) {
		uint32_t loader = sw_new(w, t_loader, site_loader, main);
		sw_put(w, m->base.thread_obj[i], s_target, loader);
		struct htr_root l = { .kind = HTR_ROOT_LOCAL, .object = loader,
				      .thread = m->base.thread_id[i], .method = run, .depth = 0, .slot = 0 };
		sw_root_add(w, &l);
	}
}

static void load_product(struct sw *w, struct mc *m, uint64_t id)
{
	uint64_t th = m->base.thread_id[1 + sw_rng_below(&w->rng, NLOADERS)];
	char name[40];
	snprintf(name, sizeof(name), "product-%llu", (unsigned long long)id);

	/* new StringBuilder(24): the builder and its buffer die young */
	uint32_t sb = sw_new(w, m->t_builder, m->site_builder, th);
	uint32_t buf = sw_new_array(w, m->t_bytes, 24, m->site_builder_bytes, th);
	sw_put(w, sb, m->s_builder_value, buf);
	int32_t name_hash;
	uint32_t str = sw_string(w, &m->names, name, th, &name_hash);

	uint32_t p = sw_new(w, m->t_product, m->site_product, th);
	uint32_t data = sw_new_array(w, m->t_ints, 1 + sw_rng_below(&w->rng, 8), m->site_data, th);
	sw_put(w, p, m->s_name, str);
	sw_put(w, p, m->s_data, data);

	uint32_t key = sw_new(w, m->t_long, m->site_long, th);
	sw_hashmap_put(w, &m->by_id, key, sw_java_long_hash((int64_t)id), p, th);
	sw_hashmap_put(w, &m->by_name, str, name_hash, p, th);
}

int synth_multicache(struct sw *w, const struct sw_scenario_params *prm)
{
	struct mc m;
	setup(w, &m);
	start(w, &m);
	uint64_t loaded = 0;
	for (uint32_t k = 1; k <= prm->g && !sw_failed(w); k++) {
		uint64_t until = prm->n * k / prm->g;
		for (; loaded < until && !sw_failed(w); loaded++)
			load_product(w, &m, FIRST_PRODUCT_ID + loaded);
		struct sw_gc_spec gc = { .cause = "G1 Evacuation Pause" };
		if (k == prm->g) {
			gc.cause = "System.gc()";
			gc.flags = HTR_GC_FULL;
		}
		sw_gc(w, &gc, NULL);
	}
	return sw_status(w);
}
