/* expr.h - the language of user-defined classifiers (classification paper
 * §4.4, without recompiling): a small typed expression over one object's
 * properties.  README.md and classifiers/README document it for users;
 * this is the short form.
 *
 *   expr   := 'if' expr 'then' expr ('elif' expr 'then' expr)* 'else' expr
 *           | or
 *   or     := and ('or' and)*          and := not ('and' not)*
 *   not    := 'not' not | cmp
 *   cmp    := add [('=='|'!='|'<'|'<='|'>'|'>='|'in'|'~') add]
 *   add    := mul (('+'|'-') mul)*     mul := unary (('*'|'/'|'%') unary)*
 *   unary  := '-' unary | primary
 *   primary:= INT | STRING | 'true' | 'false' | PROPERTY | FUNC '(' args ')'
 *           | '(' expr ')'
 * INT is decimal, at most INT64_MAX (a larger literal does not compile).
 * Comments run from '#' to the end of the line.  Types are checked when a
 * definition is compiled; the type of the whole expression is the
 * classifier's cardinality:
 *   string or int  one-to-one        by-NAME/VALUE/
 *   list           one-to-many       by-NAME/V1/, by-NAME/V2/ ...
 *   path           one-to-hierarchy  by-NAME/A/B/C/
 *   parts          one-to-many, each part with its own byte count
 *   bool           a filter          only-NAME/
 * A definitions file (-o classifiers=FILE) is a sequence of
 * `NAME = EXPR`, optionally separated by ';'.
 *
 * Evaluation asks a host (struct expr_host) for properties, so this module
 * knows nothing of traces or heap states.  Strings and lists built while
 * evaluating live in a per-evaluation arena (struct xarena).
 *
 * Ownership: struct expr owns its nodes and literals; expr_free.
 */
#ifndef HEAPFS_ANALYSES_EXPR_H
#define HEAPFS_ANALYSES_EXPR_H

#include <stddef.h>
#include <stdint.h>

enum xtype { XT_BOOL = 1, XT_INT, XT_STR, XT_LIST, XT_PATH, XT_PARTS };

/* Object properties.  The ones marked per-object in expr_props[] need the
 * object itself (its birth, its references); the others depend only on the
 * object's interned info, so a host may evaluate once per info. */
enum xprop {
	XP_TYPE, XP_PACKAGE, XP_SITE, XP_FRAMES, XP_THREAD, XP_SIZE, XP_ARRAY_LENGTH, XP_KIND,
	XP_TYPE_KIND, XP_IS_ARRAY,
	XP_AGE, XP_BIRTH, XP_ID, XP_REFEREE_TYPES, XP_REFERRER_TYPES, XP_REFEREES, XP_REFERRERS,
	XP_HEADER_BYTES, XP_POINTER_BYTES, XP_NULL_BYTES, XP_PRIMITIVE_BYTES,
	XP_COUNT_
};

struct xprop_def {
	const char *name;
	enum xtype type;
	int per_object;
	const char *about;
};
extern const struct xprop_def expr_props[XP_COUNT_];

struct xstr {
	const char *s;
	uint32_t len;
};

struct xval {
	enum xtype t;
	int64_t i;              /* BOOL, INT */
	struct xstr s;          /* STR */
	struct xstr *items;     /* LIST, PATH, PARTS */
	int64_t *w;             /* PARTS: bytes of each part */
	uint32_t n;
};

/* Bump allocator for one evaluation; reset between objects.  A refused
 * allocation sets need (the bytes it would have taken in all; SIZE_MAX
 * when beyond counting), so that a host can grow the arena and evaluate
 * again. */
struct xarena {
	char *buf;
	size_t len, cap;
	size_t need;
};
void *xarena_alloc(struct xarena *a, size_t n);

struct expr_host {
	void *ctx;
	/* Property p of object o (an info index when evaluating per info). */
	int (*prop)(void *ctx, uint32_t o, enum xprop p, struct xval *out, struct xarena *a);
	/* Referees (dir 0) or referrers (dir 1) of o. */
	uint32_t (*degree)(void *ctx, uint32_t o, int dir);
	uint32_t (*neighbour)(void *ctx, uint32_t o, int dir, uint32_t k);
	/* Optional: a key of o's type, equal exactly when the type names are
	 * equal.  With it, `type in referee_types` (and referrer_types) compares
	 * keys instead of building the list of names. */
	uint32_t (*type_key)(void *ctx, uint32_t o);
};

struct expr;

struct expr_error {
	uint32_t line, col;     /* 1-based; 0 when not about a position */
	char msg[200];
};

/* Compiles one expression (the content of a classifiers/NAME file). */
int expr_compile(const char *src, size_t len, struct expr **out, struct expr_error *err);

/* Compiles a definitions file; calls each(ctx, name, expr) for every
 * definition (each takes ownership of expr even when it fails).  Stops at
 * the first error: -EINVAL with err, or what each returned. */
typedef int (*expr_def_fn)(void *ctx, const char *name, struct expr *e);
int expr_compile_defs(const char *src, size_t len, expr_def_fn each, void *ctx,
		      struct expr_error *err);

void expr_free(struct expr *e);
enum xtype expr_type(const struct expr *e);
/* 1 if evaluation needs the object (per-object properties, neighbours). */
int expr_per_object(const struct expr *e);
/* 1 if evaluation follows references (needs the object graph). */
int expr_uses_graph(const struct expr *e);

/* A parts() expression whose names are literals and whose byte counts are
 * each one property: a host may read the properties itself, without
 * evaluating (instance-health).  names point into e (valid while it
 * lives). */
#define XPARTS_PLAN_MAX 8
struct xparts_plan {
	uint32_t n;
	struct xstr name[XPARTS_PLAN_MAX];
	enum xprop prop[XPARTS_PLAN_MAX];
};
/* 1 and *plan when e is such an expression with at most XPARTS_PLAN_MAX
 * parts, all names distinct; 0 otherwise. */
int expr_parts_plan(const struct expr *e, struct xparts_plan *plan);

/* Evaluates for object o.  Returns 0; -EDOM when the value is undefined:
 * integer arithmetic is checked, so overflow of + - * / % or unary -
 * (INT64_MIN / -1 and INT64_MIN % -1 included), division or modulo by
 * zero, a negative byte count in parts() and byte counts of one parts()
 * adding up beyond INT64_MAX fail instead of wrapping; -ERANGE when the
 * arena is full or the host fails.  The object is then classified as
 * "<error>". */
int expr_eval(const struct expr *e, const struct expr_host *h, uint32_t o, struct xarena *a,
	      struct xval *out);

/* Why an evaluation failed: what, a static string ("integer overflow in
 * +", "division by zero in /"), and where in the definition (1-based line
 * and column of the operator, call or property; 0 when the failure is not
 * about one, as an arena too small). */
struct expr_fault {
	const char *what;
	uint32_t line, col;
};

/* expr_eval that says why it failed in *fault (cleared first; may be NULL). */
int expr_eval_fault(const struct expr *e, const struct expr_host *h, uint32_t o,
		    struct xarena *a, struct xval *out, struct expr_fault *fault);

/* A valid classifier name: [a-z0-9][a-z0-9_.-]*, at most 48 bytes. */
int expr_valid_name(const char *name, size_t len);
const char *xtype_name(enum xtype t);

#endif
