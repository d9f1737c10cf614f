/* expr.c - see expr.h.  A lexer, a recursive-descent parser that type-checks
 * while it builds (recursion over the expression text, bounded by
 * MAX_NEST, never over the object graph), and a tree-walking evaluator. */
#include "expr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "features.h"

#define MAX_NEST 64
#define MAX_NODES 4096
#define MAX_ARGS 32

const struct xprop_def expr_props[XP_COUNT_] = {
	[XP_TYPE] = { "type", XT_STR, 0, "class name: java.util.HashMap, int[]" },
	[XP_PACKAGE] = { "package", XT_STR, 0, "package of the class (of the element class for arrays), \"\" if none" },
	[XP_SITE] = { "site", XT_STR, 0, "allocating frame, Class.method:line (\"<unknown site>\")" },
	[XP_FRAMES] = { "frames", XT_LIST, 0, "allocating frame, then its callers" },
	[XP_THREAD] = { "thread", XT_STR, 0, "allocating thread" },
	[XP_SIZE] = { "size", XT_INT, 0, "shallow size in bytes" },
	[XP_ARRAY_LENGTH] = { "array_length", XT_INT, 0, "elements of an array, -1 for instances" },
	[XP_KIND] = { "kind", XT_STR, 0, "instance, small-array (< 255 elements), big-array" },
	[XP_TYPE_KIND] = { "type_kind", XT_STR, 0, "instance, object-array, primitive-array" },
	[XP_IS_ARRAY] = { "is_array", XT_BOOL, 0, "true for arrays" },
	[XP_AGE] = { "age", XT_INT, 1, "GCs survived at this GC, -1 unknown" },
	[XP_BIRTH] = { "birth", XT_INT, 1, "GC number the object was born after, 0 before the first GC, -1 unknown" },
	[XP_ID] = { "id", XT_INT, 1, "object id" },
	[XP_REFEREE_TYPES] = { "referee_types", XT_LIST, 1, "types of the objects it references (graph GCs)" },
	[XP_REFERRER_TYPES] = { "referrer_types", XT_LIST, 1, "types of the objects referencing it" },
	[XP_REFEREES] = { "referees", XT_INT, 1, "number of references it holds (non-null)" },
	[XP_REFERRERS] = { "referrers", XT_INT, 1, "number of references to it" },
	[XP_HEADER_BYTES] = { "header_bytes", XT_INT, 1, "object header bytes" },
	[XP_POINTER_BYTES] = { "pointer_bytes", XT_INT, 1, "bytes of non-null reference slots" },
	[XP_NULL_BYTES] = { "null_bytes", XT_INT, 1, "bytes of null reference slots" },
	[XP_PRIMITIVE_BYTES] = { "primitive_bytes", XT_INT, 1, "the rest: primitive fields, elements, padding" },
};

enum xop {
	OP_INT, OP_STR, OP_PROP, OP_NOT, OP_NEG, OP_AND, OP_OR,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_GLOB,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_IF,
	/* functions */
	OP_PATH, OP_LIST, OP_TOSTR, OP_LEN, OP_ANY_REFEREE, OP_ANY_REFERRER, OP_COUNT_REFEREES,
	OP_COUNT_REFERRERS, OP_STARTS, OP_ENDS, OP_CONTAINS, OP_SPLIT, OP_PARTS, OP_LOG2,
	/* `type in referee_types` / `type in referrer_types` (i: 0 / 1), compiled
	 * apart: hosts with type_key answer it without building the name list */
	OP_TYPE_IN,
};

struct func_def {
	const char *name;
	enum xop op;
	int min_args, max_args;
	const char *about;
};

static const struct func_def funcs[] = {
	{ "path", OP_PATH, 1, MAX_ARGS, "path(a, b, ...): a hierarchy; lists are spliced in" },
	{ "list", OP_LIST, 1, MAX_ARGS, "list(a, b, ...): several values (one-to-many)" },
	{ "str", OP_TOSTR, 1, 1, "str(x): x as a string" },
	{ "len", OP_LEN, 1, 1, "len(x): length of a string, list or path" },
	{ "any_referee", OP_ANY_REFEREE, 1, 1, "any_referee(cond): cond holds for an object it references" },
	{ "any_referrer", OP_ANY_REFERRER, 1, 1, "any_referrer(cond): cond holds for an object referencing it" },
	{ "count_referees", OP_COUNT_REFEREES, 1, 1, "count_referees(cond): referenced objects where cond holds" },
	{ "count_referrers", OP_COUNT_REFERRERS, 1, 1, "count_referrers(cond): referencing objects where cond holds" },
	{ "starts_with", OP_STARTS, 2, 2, "starts_with(s, prefix)" },
	{ "ends_with", OP_ENDS, 2, 2, "ends_with(s, suffix)" },
	{ "contains", OP_CONTAINS, 2, 2, "contains(s, part)" },
	{ "split", OP_SPLIT, 2, 2, "split(s, sep): list of the pieces" },
	{ "parts", OP_PARTS, 2, MAX_ARGS, "parts(name1, bytes1, name2, bytes2, ...): the object's bytes split into parts" },
	{ "log2", OP_LOG2, 1, 1, "log2(n): floor of log2(n), -1 for n <= 0" },
};
#define NFUNCS (sizeof funcs / sizeof funcs[0])

struct xnode {
	enum xop op;
	enum xtype t;
	uint32_t nkids, kid0;    /* kids: e->kids[kid0 .. kid0+nkids) */
	int64_t i;               /* INT, PROP (enum xprop) */
	char *s; uint32_t slen;  /* STR literal, owned */
	uint32_t line, col;      /* of the operator, call or property: for faults */
};

struct expr {
	struct xnode *nodes; uint32_t nnodes, capnodes;
	uint32_t *kids; uint32_t nkids, capkids;
	uint32_t root;
	int per_object, uses_graph;
};

/* ---- lexer ---- */

enum tok { T_EOF, T_INT, T_STR, T_IDENT, T_OP, T_ERR };

struct lexer {
	const char *src; size_t len, pos;
	uint32_t line, col;        /* of pos */
	/* current token */
	enum tok t;
	uint32_t tline, tcol;
	size_t tstart, tlen;
	int64_t ival;
	char *sval; uint32_t slen; /* decoded string literal (owned by the lexer until taken) */
	char opv[3];
	struct expr_error *err;
	int failed;
	uint32_t depth;
	struct expr *e;
};

static int fail_at(struct lexer *lx, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail_at(struct lexer *lx, uint32_t line, uint32_t col, const char *fmt, ...)
{
	if (!lx->failed) {
		va_list ap;
		va_start(ap, fmt);
		lx->err->line = line;
		lx->err->col = col;
		vsnprintf(lx->err->msg, sizeof lx->err->msg, fmt, ap);
		va_end(ap);
		lx->failed = 1;
	}
	return -EINVAL;
}

static void advance_char(struct lexer *lx)
{
	if (lx->src[lx->pos] == '\n') {
		lx->line++;
		lx->col = 1;
	} else if (((unsigned char)lx->src[lx->pos] & 0xc0) != 0x80) {
		lx->col++; /* columns count characters, not UTF-8 continuation bytes */
	}
	lx->pos++;
}

static void skip_space(struct lexer *lx)
{
	while (lx->pos < lx->len) {
		char c = lx->src[lx->pos];
		if (c == '#') {
			while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
				advance_char(lx);
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			advance_char(lx);
		} else {
			break;
		}
	}
}

static int is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int lex_string(struct lexer *lx)
{
	free(lx->sval);
	lx->sval = malloc(lx->len - lx->pos + 1);
	lx->slen = 0;
	if (!lx->sval)
		return fail_at(lx, lx->tline, lx->tcol, "out of memory");
	advance_char(lx); /* the opening quote */
	while (lx->pos < lx->len && lx->src[lx->pos] != '"') {
		char c = lx->src[lx->pos];
		if (c == '\n' || c == '\0')
			break;
		if (c == '\\') {
			uint32_t l = lx->line, col = lx->col;
			advance_char(lx);
			if (lx->pos >= lx->len)
				break;
			c = lx->src[lx->pos];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case '\\': case '"': break;
			default: return fail_at(lx, l, col, "unknown escape \\%c in a string", c);
			}
		}
		lx->sval[lx->slen++] = c;
		advance_char(lx);
	}
	if (lx->pos >= lx->len || lx->src[lx->pos] != '"')
		return fail_at(lx, lx->tline, lx->tcol, "string not closed on its line");
	advance_char(lx);
	lx->sval[lx->slen] = '\0';
	lx->t = T_STR;
	return 0;
}

static int lex_number(struct lexer *lx)
{
	uint64_t v = 0;
	while (lx->pos < lx->len && lx->src[lx->pos] >= '0' && lx->src[lx->pos] <= '9') {
		uint64_t d = (uint64_t)(lx->src[lx->pos] - '0');
		if (v > (uint64_t)(INT64_MAX - (int64_t)d) / 10)
			return fail_at(lx, lx->tline, lx->tcol,
				       "integer literal larger than %" PRId64 " (the largest int)",
				       INT64_MAX);
		v = v * 10 + d;
		advance_char(lx);
	}
	if (lx->pos < lx->len && is_ident_char(lx->src[lx->pos]))
		return fail_at(lx, lx->line, lx->col, "unexpected '%c' in a number", lx->src[lx->pos]);
	lx->ival = (int64_t)v;
	lx->t = T_INT;
	return 0;
}

static const char *const two_char_ops[] = { "==", "!=", "<=", ">=" };
static const char one_char_ops[] = "<>+-*/%(),~;=";

static int next(struct lexer *lx)
{
	if (lx->failed)
		return -EINVAL;
	skip_space(lx);
	lx->tline = lx->line;
	lx->tcol = lx->col;
	lx->tstart = lx->pos;
	if (lx->pos >= lx->len) {
		lx->t = T_EOF;
		return 0;
	}
	char c = lx->src[lx->pos];
	int rc = 0;
	if (c == '"') {
		rc = lex_string(lx);
	} else if (c >= '0' && c <= '9') {
		rc = lex_number(lx);
	} else if (is_ident_start(c)) {
		while (lx->pos < lx->len && is_ident_char(lx->src[lx->pos]))
			advance_char(lx);
		lx->t = T_IDENT;
	} else {
		lx->t = T_OP;
		memset(lx->opv, 0, sizeof lx->opv);
		for (size_t k = 0; k < sizeof two_char_ops / sizeof *two_char_ops; k++) {
			if (lx->pos + 1 < lx->len && lx->src[lx->pos] == two_char_ops[k][0] &&
			    lx->src[lx->pos + 1] == two_char_ops[k][1]) {
				memcpy(lx->opv, two_char_ops[k], 2);
				advance_char(lx);
				advance_char(lx);
				break;
			}
		}
		if (!lx->opv[0]) {
			if (c == '\0' || !strchr(one_char_ops, c)) {
				if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
					return fail_at(lx, lx->tline, lx->tcol, "unexpected byte 0x%02x",
						       (unsigned char)c);
				return fail_at(lx, lx->tline, lx->tcol, "unexpected character '%c'", c);
			}
			lx->opv[0] = c;
			advance_char(lx);
		}
	}
	lx->tlen = lx->pos - lx->tstart;
	return rc;
}

static int tok_is(const struct lexer *lx, enum tok t, const char *s)
{
	if (lx->t != t)
		return 0;
	if (t == T_OP)
		return strcmp(lx->opv, s) == 0;
	return lx->tlen == strlen(s) && memcmp(lx->src + lx->tstart, s, lx->tlen) == 0;
}

static int is_kw(const struct lexer *lx, const char *kw)
{
	return tok_is(lx, T_IDENT, kw);
}

static const char *tok_desc(const struct lexer *lx, char *buf, size_t len)
{
	switch (lx->t) {
	case T_EOF: return "the end of the text";
	case T_STR: return "a string";
	case T_INT: return "a number";
	default:
		snprintf(buf, len, "'%.*s'", (int)(lx->tlen > 40 ? 40 : lx->tlen), lx->src + lx->tstart);
		return buf;
	}
}

static int expect(struct lexer *lx, enum tok t, const char *s)
{
	char b[64];
	if (!tok_is(lx, t, s))
		return fail_at(lx, lx->tline, lx->tcol, "expected '%s', found %s", s,
			       tok_desc(lx, b, sizeof b));
	return next(lx);
}

/* ---- node building and type checks ---- */

const char *xtype_name(enum xtype t)
{
	switch (t) {
	case XT_BOOL: return "bool";
	case XT_INT: return "int";
	case XT_STR: return "string";
	case XT_LIST: return "list";
	case XT_PATH: return "path";
	case XT_PARTS: return "parts";
	}
	return "?";
}

static int new_node(struct lexer *lx, enum xop op, enum xtype t, const uint32_t *kids,
		    uint32_t nkids, uint32_t *out)
{
	struct expr *e = lx->e;
	if (e->nnodes >= MAX_NODES)
		return fail_at(lx, lx->tline, lx->tcol, "expression too large (more than %d parts)",
			       MAX_NODES);
	if (e->nnodes == e->capnodes) {
		uint32_t cap = e->capnodes ? e->capnodes * 2 : 32;
		struct xnode *p = realloc(e->nodes, cap * sizeof *p);
		if (!p)
			return fail_at(lx, lx->tline, lx->tcol, "out of memory");
		e->nodes = p;
		e->capnodes = cap;
	}
	if (e->nkids + nkids > e->capkids) {
		uint32_t cap = (e->capkids + nkids) * 2 + 16;
		uint32_t *p = realloc(e->kids, cap * sizeof *p);
		if (!p)
			return fail_at(lx, lx->tline, lx->tcol, "out of memory");
		e->kids = p;
		e->capkids = cap;
	}
	struct xnode *n = &e->nodes[e->nnodes];
	memset(n, 0, sizeof *n);
	n->op = op;
	n->t = t;
	n->line = lx->tline;
	n->col = lx->tcol;
	n->kid0 = e->nkids;
	n->nkids = nkids;
	if (nkids)
		memcpy(e->kids + e->nkids, kids, nkids * sizeof *kids);
	e->nkids += nkids;
	*out = e->nnodes++;
	return 0;
}

static enum xtype ty(const struct lexer *lx, uint32_t n)
{
	return lx->e->nodes[n].t;
}

static int type_error(struct lexer *lx, uint32_t line, uint32_t col, const char *what,
		      enum xtype a, enum xtype b)
{
	if (b)
		return fail_at(lx, line, col, "%s cannot combine %s and %s", what, xtype_name(a),
			       xtype_name(b));
	return fail_at(lx, line, col, "%s needs %s", what, xtype_name(a));
}

static int parse_expr(struct lexer *lx, uint32_t *out);

static int parse_args(struct lexer *lx, uint32_t *args, uint32_t *nargs, uint32_t *lines,
		      uint32_t *cols)
{
	int rc = expect(lx, T_OP, "(");
	*nargs = 0;
	while (!rc && !tok_is(lx, T_OP, ")")) {
		if (*nargs == MAX_ARGS)
			return fail_at(lx, lx->tline, lx->tcol, "more than %d arguments", MAX_ARGS);
		if (*nargs && (rc = expect(lx, T_OP, ",")))
			return rc;
		lines[*nargs] = lx->tline;
		cols[*nargs] = lx->tcol;
		if ((rc = parse_expr(lx, &args[(*nargs)++])))
			return rc;
	}
	return rc ? rc : next(lx);
}

static int check_call(struct lexer *lx, const struct func_def *f, const uint32_t *a, uint32_t n,
		      const uint32_t *lines, const uint32_t *cols, enum xtype *t)
{
	for (uint32_t k = 0; k < n; k++) {
		enum xtype at = ty(lx, a[k]);
		int ok = 1;
		switch (f->op) {
		case OP_PATH: case OP_LIST: ok = at == XT_STR || at == XT_INT || at == XT_LIST; break;
		case OP_TOSTR: ok = at == XT_STR || at == XT_INT || at == XT_BOOL; break;
		case OP_LEN: ok = at == XT_STR || at == XT_LIST || at == XT_PATH; break;
		case OP_ANY_REFEREE: case OP_ANY_REFERRER: case OP_COUNT_REFEREES:
		case OP_COUNT_REFERRERS: ok = at == XT_BOOL; break;
		case OP_STARTS: case OP_ENDS: case OP_CONTAINS: case OP_SPLIT: ok = at == XT_STR; break;
		case OP_PARTS: ok = k % 2 ? at == XT_INT : at == XT_STR; break;
		case OP_LOG2: ok = at == XT_INT; break;
		default: break;
		}
		if (!ok)
			return fail_at(lx, lines[k], cols[k], "argument %u of %s() cannot be %s", k + 1,
				       f->name, xtype_name(at));
	}
	if (f->op == OP_PARTS && n % 2)
		return fail_at(lx, lx->tline, lx->tcol, "parts() takes name, bytes pairs");
	switch (f->op) {
	case OP_PATH: *t = XT_PATH; break;
	case OP_LIST: case OP_SPLIT: *t = XT_LIST; break;
	case OP_TOSTR: *t = XT_STR; break;
	case OP_LEN: case OP_COUNT_REFEREES: case OP_COUNT_REFERRERS: case OP_LOG2: *t = XT_INT; break;
	case OP_PARTS: *t = XT_PARTS; break;
	default: *t = XT_BOOL; break;
	}
	if (f->op >= OP_ANY_REFEREE && f->op <= OP_COUNT_REFERRERS)
		lx->e->per_object = lx->e->uses_graph = 1;
	return 0;
}

static int parse_call_or_prop(struct lexer *lx, uint32_t *out)
{
	uint32_t line = lx->tline, col = lx->tcol;
	char name[64];
	size_t n = lx->tlen < sizeof name ? lx->tlen : sizeof name - 1;
	memcpy(name, lx->src + lx->tstart, n);
	name[n] = '\0';
	int rc = next(lx);
	if (rc)
		return rc;
	if (tok_is(lx, T_OP, "(")) {
		for (size_t f = 0; f < NFUNCS; f++) {
			if (strcmp(funcs[f].name, name) != 0)
				continue;
			uint32_t args[MAX_ARGS], lines[MAX_ARGS], cols[MAX_ARGS], nargs;
			enum xtype t = XT_BOOL;
			if ((rc = parse_args(lx, args, &nargs, lines, cols)))
				return rc;
			if ((int)nargs < funcs[f].min_args || (int)nargs > funcs[f].max_args)
				return fail_at(lx, line, col, "%s() takes %d to %d arguments, not %u",
					       name, funcs[f].min_args, funcs[f].max_args, nargs);
			if ((rc = check_call(lx, &funcs[f], args, nargs, lines, cols, &t)) ||
			    (rc = new_node(lx, funcs[f].op, t, args, nargs, out)))
				return rc;
			lx->e->nodes[*out].line = line;
			lx->e->nodes[*out].col = col;
			return 0;
		}
		return fail_at(lx, line, col, "unknown function %s()", name);
	}
	for (uint32_t p = 0; p < XP_COUNT_; p++) {
		if (strcmp(expr_props[p].name, name) != 0)
			continue;
		if ((rc = new_node(lx, OP_PROP, expr_props[p].type, NULL, 0, out)))
			return rc;
		lx->e->nodes[*out].i = p;
		lx->e->nodes[*out].line = line;
		lx->e->nodes[*out].col = col;
		if (expr_props[p].per_object)
			lx->e->per_object = 1;
		if (p == XP_REFEREE_TYPES || p == XP_REFERRER_TYPES || p == XP_REFEREES ||
		    p == XP_REFERRERS || p == XP_POINTER_BYTES || p == XP_NULL_BYTES ||
		    p == XP_PRIMITIVE_BYTES)
			lx->e->uses_graph = 1;
		return 0;
	}
	if (!strcmp(name, "true") || !strcmp(name, "false")) {
		if ((rc = new_node(lx, OP_INT, XT_BOOL, NULL, 0, out)))
			return rc;
		lx->e->nodes[*out].i = name[0] == 't';
		return 0;
	}
	return fail_at(lx, line, col, "unknown property %s", name);
}

static int parse_primary(struct lexer *lx, uint32_t *out)
{
	char b[64];
	int rc;
	switch (lx->t) {
	case T_INT:
		if ((rc = new_node(lx, OP_INT, XT_INT, NULL, 0, out)))
			return rc;
		lx->e->nodes[*out].i = lx->ival;
		return next(lx);
	case T_STR:
		if ((rc = new_node(lx, OP_STR, XT_STR, NULL, 0, out)))
			return rc;
		lx->e->nodes[*out].s = lx->sval;
		lx->e->nodes[*out].slen = lx->slen;
		lx->sval = NULL;
		return next(lx);
	case T_IDENT:
		return parse_call_or_prop(lx, out);
	case T_OP:
		if (tok_is(lx, T_OP, "(")) {
			if ((rc = next(lx)) || (rc = parse_expr(lx, out)))
				return rc;
			return expect(lx, T_OP, ")");
		}
		break;
	default:
		break;
	}
	return fail_at(lx, lx->tline, lx->tcol, "expected a value, found %s", tok_desc(lx, b, sizeof b));
}

static int enter(struct lexer *lx)
{
	if (++lx->depth > MAX_NEST)
		return fail_at(lx, lx->tline, lx->tcol, "nested more than %d deep", MAX_NEST);
	return 0;
}

static int parse_unary(struct lexer *lx, uint32_t *out)
{
	int rc = enter(lx);
	if (!rc && tok_is(lx, T_OP, "-")) {
		uint32_t line = lx->tline, col = lx->tcol, k;
		if (!(rc = next(lx)) && !(rc = parse_unary(lx, &k))) {
			if (ty(lx, k) != XT_INT)
				rc = type_error(lx, line, col, "'-'", XT_INT, 0);
			else if (!(rc = new_node(lx, OP_NEG, XT_INT, &k, 1, out))) {
				lx->e->nodes[*out].line = line;
				lx->e->nodes[*out].col = col;
			}
		}
	} else if (!rc) {
		rc = parse_primary(lx, out);
	}
	lx->depth--;
	return rc;
}

static int is_prop(const struct expr *e, uint32_t n, enum xprop p)
{
	return e->nodes[n].op == OP_PROP && e->nodes[n].i == (int64_t)p;
}

/* 0 or 1 (referees, referrers) when `a in b` is the object's type among
 * its neighbours' types, else -1.  Collection health asks it of every
 * object: comparing type keys instead of building the names' list took
 * it from 8.4 to 11.8 M objects/s (make bench). */
static int64_t type_in_neighbours(const struct expr *e, uint32_t a, uint32_t b)
{
	if (!is_prop(e, a, XP_TYPE))
		return -1;
	return is_prop(e, b, XP_REFEREE_TYPES) ? 0 : is_prop(e, b, XP_REFERRER_TYPES) ? 1 : -1;
}

static int binary(struct lexer *lx, enum xop op, uint32_t a, uint32_t b, uint32_t line,
		  uint32_t col, const char *opname, uint32_t *out)
{
	enum xtype ta = ty(lx, a), tb = ty(lx, b), t = XT_BOOL;
	uint32_t k[2] = { a, b };
	char what[32];
	snprintf(what, sizeof what, "'%s'", opname);
	switch (op) {
	case OP_AND: case OP_OR:
		if (ta != XT_BOOL || tb != XT_BOOL)
			return type_error(lx, line, col, what, ta, tb);
		break;
	case OP_EQ: case OP_NE:
		if (ta != tb || (ta != XT_INT && ta != XT_STR && ta != XT_BOOL))
			return type_error(lx, line, col, what, ta, tb);
		break;
	case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		if (ta != XT_INT || tb != XT_INT)
			return type_error(lx, line, col, what, ta, tb);
		break;
	case OP_IN:
		if (ta != XT_STR || (tb != XT_LIST && tb != XT_STR && tb != XT_PATH))
			return type_error(lx, line, col, what, ta, tb);
		break;
	case OP_GLOB:
		if (ta != XT_STR || tb != XT_STR)
			return type_error(lx, line, col, what, ta, tb);
		break;
	case OP_ADD:
		if (ta == XT_INT && tb == XT_INT)
			t = XT_INT;
		else if ((ta == XT_STR || ta == XT_INT) && (tb == XT_STR || tb == XT_INT))
			t = XT_STR;
		else
			return type_error(lx, line, col, what, ta, tb);
		break;
	default: /* - * / % */
		if (ta != XT_INT || tb != XT_INT)
			return type_error(lx, line, col, what, ta, tb);
		t = XT_INT;
		break;
	}
	int64_t dir = op == OP_IN ? type_in_neighbours(lx->e, a, b) : -1;
	int rc = new_node(lx, dir >= 0 ? OP_TYPE_IN : op, t, k, 2, out);
	if (rc)
		return rc;
	if (dir >= 0)
		lx->e->nodes[*out].i = dir;
	lx->e->nodes[*out].line = line;
	lx->e->nodes[*out].col = col;
	return 0;
}

static int parse_mul(struct lexer *lx, uint32_t *out)
{
	int rc = parse_unary(lx, out);
	while (!rc && (tok_is(lx, T_OP, "*") || tok_is(lx, T_OP, "/") || tok_is(lx, T_OP, "%"))) {
		char o = lx->opv[0];
		uint32_t line = lx->tline, col = lx->tcol, b;
		if ((rc = next(lx)) || (rc = parse_unary(lx, &b)))
			break;
		enum xop op = o == '*' ? OP_MUL : o == '/' ? OP_DIV : OP_MOD;
		char name[2] = { o, 0 };
		rc = binary(lx, op, *out, b, line, col, name, out);
	}
	return rc;
}

static int parse_add(struct lexer *lx, uint32_t *out)
{
	int rc = parse_mul(lx, out);
	while (!rc && (tok_is(lx, T_OP, "+") || tok_is(lx, T_OP, "-"))) {
		char o = lx->opv[0];
		uint32_t line = lx->tline, col = lx->tcol, b;
		if ((rc = next(lx)) || (rc = parse_mul(lx, &b)))
			break;
		char name[2] = { o, 0 };
		rc = binary(lx, o == '+' ? OP_ADD : OP_SUB, *out, b, line, col, name, out);
	}
	return rc;
}

static int parse_cmp(struct lexer *lx, uint32_t *out)
{
	static const struct { const char *s; enum xop op; } cmps[] = {
		{ "==", OP_EQ }, { "!=", OP_NE }, { "<", OP_LT }, { "<=", OP_LE }, { ">", OP_GT },
		{ ">=", OP_GE }, { "~", OP_GLOB },
	};
	int rc = parse_add(lx, out);
	if (rc)
		return rc;
	for (size_t k = 0; k < sizeof cmps / sizeof *cmps; k++) {
		if (!tok_is(lx, T_OP, cmps[k].s))
			continue;
		uint32_t line = lx->tline, col = lx->tcol, b;
		if ((rc = next(lx)) || (rc = parse_add(lx, &b)))
			return rc;
		return binary(lx, cmps[k].op, *out, b, line, col, cmps[k].s, out);
	}
	if (is_kw(lx, "in")) {
		uint32_t line = lx->tline, col = lx->tcol, b;
		if ((rc = next(lx)) || (rc = parse_add(lx, &b)))
			return rc;
		return binary(lx, OP_IN, *out, b, line, col, "in", out);
	}
	return 0;
}

static int parse_not(struct lexer *lx, uint32_t *out)
{
	int rc = enter(lx);
	if (!rc && is_kw(lx, "not")) {
		uint32_t line = lx->tline, col = lx->tcol, k;
		if (!(rc = next(lx)) && !(rc = parse_not(lx, &k))) {
			if (ty(lx, k) != XT_BOOL)
				rc = type_error(lx, line, col, "'not'", XT_BOOL, 0);
			else
				rc = new_node(lx, OP_NOT, XT_BOOL, &k, 1, out);
		}
	} else if (!rc) {
		rc = parse_cmp(lx, out);
	}
	lx->depth--;
	return rc;
}

static int parse_and(struct lexer *lx, uint32_t *out)
{
	int rc = parse_not(lx, out);
	while (!rc && is_kw(lx, "and")) {
		uint32_t line = lx->tline, col = lx->tcol, b;
		if ((rc = next(lx)) || (rc = parse_not(lx, &b)))
			break;
		rc = binary(lx, OP_AND, *out, b, line, col, "and", out);
	}
	return rc;
}

static int parse_or(struct lexer *lx, uint32_t *out)
{
	int rc = parse_and(lx, out);
	while (!rc && is_kw(lx, "or")) {
		uint32_t line = lx->tline, col = lx->tcol, b;
		if ((rc = next(lx)) || (rc = parse_and(lx, &b)))
			break;
		rc = binary(lx, OP_OR, *out, b, line, col, "or", out);
	}
	return rc;
}

/* if C then A (elif C then A)* else A: kids c1 a1 c2 a2 ... else */
static int parse_if(struct lexer *lx, uint32_t *out)
{
	uint32_t kids[2 * MAX_ARGS + 1], n = 0;
	uint32_t line = lx->tline, col = lx->tcol;
	int rc = next(lx);
	enum xtype t = 0;
	do {
		uint32_t cl = lx->tline, cc = lx->tcol;
		if (rc || (rc = parse_expr(lx, &kids[n])))
			return rc;
		if (ty(lx, kids[n]) != XT_BOOL)
			return fail_at(lx, cl, cc, "the condition of 'if' must be bool, not %s",
				       xtype_name(ty(lx, kids[n])));
		n++;
		if ((rc = expect(lx, T_IDENT, "then")))
			return rc;
		uint32_t bl = lx->tline, bc = lx->tcol;
		if ((rc = parse_expr(lx, &kids[n])))
			return rc;
		if (t && ty(lx, kids[n]) != t)
			return fail_at(lx, bl, bc, "this branch is %s, the first one is %s",
				       xtype_name(ty(lx, kids[n])), xtype_name(t));
		t = ty(lx, kids[n++]);
		if (n >= 2 * MAX_ARGS)
			return fail_at(lx, line, col, "more than %d elif branches", MAX_ARGS);
		if (!is_kw(lx, "elif"))
			break;
		rc = next(lx);
	} while (1);
	if ((rc = expect(lx, T_IDENT, "else")))
		return rc;
	uint32_t bl = lx->tline, bc = lx->tcol;
	if ((rc = parse_expr(lx, &kids[n])))
		return rc;
	if (ty(lx, kids[n]) != t)
		return fail_at(lx, bl, bc, "the else branch is %s, the others are %s",
			       xtype_name(ty(lx, kids[n])), xtype_name(t));
	n++;
	return new_node(lx, OP_IF, t, kids, n, out);
}

static int parse_expr(struct lexer *lx, uint32_t *out)
{
	int rc = enter(lx);
	if (!rc)
		rc = is_kw(lx, "if") ? parse_if(lx, out) : parse_or(lx, out);
	lx->depth--;
	return rc;
}

/* ---- compile ---- */

void expr_free(struct expr *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->nnodes; i++)
		free(e->nodes[i].s);
	free(e->nodes);
	free(e->kids);
	free(e);
}

enum xtype expr_type(const struct expr *e)
{
	return e->nodes[e->root].t;
}

int expr_per_object(const struct expr *e)
{
	return e->per_object;
}

int expr_uses_graph(const struct expr *e)
{
	return e->uses_graph;
}

int expr_parts_plan(const struct expr *e, struct xparts_plan *plan)
{
	const struct xnode *x = &e->nodes[e->root];
	if (x->op != OP_PARTS || x->nkids % 2 || x->nkids / 2 > XPARTS_PLAN_MAX)
		return 0;
	plan->n = x->nkids / 2;
	for (uint32_t k = 0; k < plan->n; k++) {
		const struct xnode *name = &e->nodes[e->kids[x->kid0 + 2 * k]];
		const struct xnode *bytes = &e->nodes[e->kids[x->kid0 + 2 * k + 1]];
		if (name->op != OP_STR || bytes->op != OP_PROP)
			return 0;
		plan->name[k] = (struct xstr){ name->s, name->slen };
		plan->prop[k] = (enum xprop)bytes->i;
		for (uint32_t j = 0; j < k; j++) {
			if (plan->name[j].len == name->slen &&
			    (!name->slen || !memcmp(plan->name[j].s, name->s, name->slen)))
				return 0;
		}
	}
	return 1;
}

static void lexer_init(struct lexer *lx, const char *src, size_t len, struct expr_error *err)
{
	memset(lx, 0, sizeof *lx);
	lx->src = src;
	lx->len = len;
	lx->line = lx->col = 1;
	lx->err = err;
	memset(err, 0, sizeof *err);
}

static int compile_one(struct lexer *lx, struct expr **out)
{
	struct expr *e = calloc(1, sizeof *e);
	if (!e)
		return fail_at(lx, 0, 0, "out of memory");
	lx->e = e;
	lx->depth = 0;
	int rc = parse_expr(lx, &e->root);
	if (rc) {
		expr_free(e);
		return rc;
	}
	*out = e;
	return 0;
}

int expr_compile(const char *src, size_t len, struct expr **out, struct expr_error *err)
{
	struct lexer lx;
	char b[64];
	lexer_init(&lx, src, len, err);
	*out = NULL;
	int rc = next(&lx);
	if (!rc && lx.t == T_EOF)
		rc = fail_at(&lx, lx.tline, lx.tcol, "empty definition");
	if (!rc)
		rc = compile_one(&lx, out);
	if (!rc && lx.t != T_EOF) {
		rc = fail_at(&lx, lx.tline, lx.tcol, "unexpected %s after the expression",
			     tok_desc(&lx, b, sizeof b));
		expr_free(*out);
		*out = NULL;
	}
	free(lx.sval);
	return rc;
}

int expr_valid_name(const char *name, size_t len)
{
	if (len == 0 || len > 48)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			 (i > 0 && (c == '-' || c == '_' || c == '.'));
		if (!ok)
			return 0;
	}
	return 1;
}

/* NAME: read raw from the text, since names may hold '-' and '.'. */
static int read_def_name(struct lexer *lx, char name[64])
{
	uint32_t line = lx->tline, col = lx->tcol;
	size_t s = lx->tstart;
	lx->pos = s;
	lx->line = line;
	lx->col = col;
	while (lx->pos < lx->len && (is_ident_char(lx->src[lx->pos]) || lx->src[lx->pos] == '-' ||
				     lx->src[lx->pos] == '.'))
		advance_char(lx);
	size_t n = lx->pos - s;
	if (!expr_valid_name(lx->src + s, n))
		return fail_at(lx, line, col,
			       "a classifier name is lower-case letters, digits, '-', '_', '.' (at most 48)");
	memcpy(name, lx->src + s, n);
	name[n] = '\0';
	return next(lx);
}

int expr_compile_defs(const char *src, size_t len, expr_def_fn each, void *ctx,
		      struct expr_error *err)
{
	struct lexer lx;
	char name[64], b[64];
	lexer_init(&lx, src, len, err);
	int rc = next(&lx);
	while (!rc && lx.t != T_EOF) {
		struct expr *e;
		if (lx.t != T_IDENT) {
			rc = fail_at(&lx, lx.tline, lx.tcol, "expected a classifier name, found %s",
				     tok_desc(&lx, b, sizeof b));
			break;
		}
		uint32_t line = lx.tline, col = lx.tcol;
		if ((rc = read_def_name(&lx, name)) || (rc = expect(&lx, T_OP, "=")))
			break;
		if ((rc = compile_one(&lx, &e)))
			break;
		if ((rc = each(ctx, name, e))) {
			if (!lx.failed && rc == -EINVAL)
				fail_at(&lx, line, col, "%s: %s", name,
					err->msg[0] ? err->msg : "refused");
			break;
		}
		while (!rc && tok_is(&lx, T_OP, ";"))
			rc = next(&lx);
	}
	free(lx.sval);
	return rc;
}

/* ---- evaluation ---- */

void *xarena_alloc(struct xarena *a, size_t n)
{
	size_t at = (a->len + 7) & ~(size_t)7;
	if (at + n > a->cap || at + n < at) {
		size_t need = at + n < at ? SIZE_MAX : at + n;
		if (need > a->need)
			a->need = need;
		return NULL;
	}
	a->len = at + n;
	return a->buf + at;
}

struct ectx {
	const struct expr *e;
	const struct expr_host *h;
	struct xarena *a;
	struct expr_fault *fault;
};

static int eval(struct ectx *c, uint32_t n, uint32_t o, struct xval *out);

/* Records why evaluation stops at node x (the first failure is the one
 * met: nothing is evaluated after it); returns rc. */
static int fail_eval(struct ectx *c, const struct xnode *x, const char *what, int rc)
{
	if (!c->fault->what)
		*c->fault = (struct expr_fault){ what, x->line, x->col };
	return rc;
}

static int str_of(struct xarena *a, const struct xval *v, struct xstr *out)
{
	if (v->t == XT_STR) {
		*out = v->s;
		return 0;
	}
	char tmp[32];
	int n = v->t == XT_BOOL ? snprintf(tmp, sizeof tmp, "%s", v->i ? "true" : "false")
				: snprintf(tmp, sizeof tmp, "%" PRId64, v->i);
	char *p = xarena_alloc(a, (size_t)n + 1);
	if (!p)
		return -ERANGE;
	memcpy(p, tmp, (size_t)n + 1);
	out->s = p;
	out->len = (uint32_t)n;
	return 0;
}

static int xstr_eq(struct xstr a, struct xstr b)
{
	return a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

static int has_sub(struct xstr s, struct xstr sub)
{
	if (sub.len == 0)
		return 1;
	for (uint32_t i = 0; i + sub.len <= s.len; i++) {
		if (memcmp(s.s + i, sub.s, sub.len) == 0)
			return 1;
	}
	return 0;
}

/* Lists and paths of the arguments, lists spliced in. */
static int eval_collect(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	struct xval v[MAX_ARGS];
	uint32_t total = 0;
	for (uint32_t k = 0; k < x->nkids; k++) {
		int rc = eval(c, c->e->kids[x->kid0 + k], o, &v[k]);
		if (rc)
			return rc;
		total += (v[k].t == XT_LIST || v[k].t == XT_PATH) ? v[k].n : 1;
	}
	struct xstr *items = xarena_alloc(c->a, (total ? total : 1) * sizeof *items);
	if (!items)
		return -ERANGE;
	uint32_t n = 0;
	for (uint32_t k = 0; k < x->nkids; k++) {
		if (v[k].t == XT_LIST || v[k].t == XT_PATH) {
			memcpy(items + n, v[k].items, v[k].n * sizeof *items);
			n += v[k].n;
		} else if (str_of(c->a, &v[k], &items[n++])) {
			return -ERANGE;
		}
	}
	out->items = items;
	out->n = n;
	return 0;
}

static int eval_prop(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	int rc = c->h->prop(c->h->ctx, o, (enum xprop)x->i, out, c->a);
	out->t = x->t;
	if (rc && c->a->need <= c->a->cap)
		return fail_eval(c, x, "the property could not be read", -ERANGE);
	return rc ? -ERANGE : 0;
}

/* eval, with a literal or a property read in place: parts() is usually
 * names and byte properties (instance-health, every object of a heap), and
 * eval's dispatch and clearing of the value were most of its time. */
static int eval_leaf(struct ectx *c, uint32_t n, uint32_t o, struct xval *out)
{
	const struct xnode *x = &c->e->nodes[n];
	if (x->op == OP_STR) {
		out->t = x->t;
		out->s = (struct xstr){ x->s, x->slen };
		return 0;
	}
	if (x->op == OP_PROP)
		return eval_prop(c, x, o, out);
	return eval(c, n, o, out);
}

static int eval_parts(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	uint32_t np = x->nkids / 2;
	int64_t total = 0;
	out->items = xarena_alloc(c->a, np * sizeof *out->items);
	out->w = xarena_alloc(c->a, np * sizeof *out->w);
	if (!out->items || !out->w)
		return -ERANGE;
	for (uint32_t k = 0; k < np; k++) {
		struct xval name, bytes;
		int rc = eval_leaf(c, c->e->kids[x->kid0 + 2 * k], o, &name);
		if (!rc)
			rc = eval_leaf(c, c->e->kids[x->kid0 + 2 * k + 1], o, &bytes);
		if (rc)
			return rc;
		/* Byte counts are summed over objects: a negative one would
		 * take bytes from the others, and one object's parts must add
		 * up to an int64 so that a part named twice can be added. */
		if (bytes.i < 0)
			return fail_eval(c, x, "negative byte count in parts()", -EDOM);
		if (__builtin_add_overflow(total, bytes.i, &total))
			return fail_eval(c, x, "integer overflow in parts()", -EDOM);
		out->items[k] = name.s;
		out->w[k] = bytes.i;
	}
	out->n = np;
	return 0;
}

static int eval_split(struct ectx *c, const struct xval *s, const struct xval *sep,
		      struct xval *out)
{
	uint32_t cap = 1;
	for (uint32_t i = 0; sep->s.len && i + sep->s.len <= s->s.len; i++) {
		if (memcmp(s->s.s + i, sep->s.s, sep->s.len) == 0)
			cap++;
	}
	out->items = xarena_alloc(c->a, cap * sizeof *out->items);
	if (!out->items)
		return -ERANGE;
	uint32_t n = 0, start = 0;
	for (uint32_t i = 0; sep->s.len && i + sep->s.len <= s->s.len;) {
		if (memcmp(s->s.s + i, sep->s.s, sep->s.len) == 0) {
			out->items[n++] = (struct xstr){ s->s.s + start, i - start };
			i += sep->s.len;
			start = i;
		} else {
			i++;
		}
	}
	out->items[n++] = (struct xstr){ s->s.s + start, s->s.len - start };
	out->n = n;
	return 0;
}

/* any_/count_ referee/referrer: the inner condition, on each neighbour. */
static int eval_neighbours(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	int dir = (x->op == OP_ANY_REFERRER || x->op == OP_COUNT_REFERRERS) ? 1 : 0;
	int any = x->op == OP_ANY_REFEREE || x->op == OP_ANY_REFERRER;
	uint32_t deg = c->h->degree(c->h->ctx, o, dir);
	int64_t count = 0;
	size_t mark = c->a->len;
	for (uint32_t k = 0; k < deg; k++) {
		struct xval v;
		int rc = eval(c, c->e->kids[x->kid0], c->h->neighbour(c->h->ctx, o, dir, k), &v);
		c->a->len = mark; /* the inner values are not kept */
		if (rc)
			return rc;
		if (v.i) {
			count++;
			if (any)
				break;
		}
	}
	out->i = any ? count > 0 : count;
	return 0;
}

static int eval_cmp(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	struct xval a, b;
	int rc = eval(c, c->e->kids[x->kid0], o, &a);
	if (!rc)
		rc = eval(c, c->e->kids[x->kid0 + 1], o, &b);
	if (rc)
		return rc;
	int64_t r = 0;
	switch (x->op) {
	case OP_EQ: case OP_NE:
		r = a.t == XT_STR ? xstr_eq(a.s, b.s) : a.i == b.i;
		if (x->op == OP_NE)
			r = !r;
		break;
	case OP_LT: r = a.i < b.i; break;
	case OP_LE: r = a.i <= b.i; break;
	case OP_GT: r = a.i > b.i; break;
	case OP_GE: r = a.i >= b.i; break;
	case OP_IN: case OP_TYPE_IN:
		if (b.t == XT_STR) {
			r = has_sub(b.s, a.s);
		} else {
			for (uint32_t k = 0; k < b.n && !r; k++)
				r = xstr_eq(a.s, b.items[k]);
		}
		break;
	case OP_GLOB: {
		char *pat = xarena_alloc(c->a, (size_t)b.s.len + 1);
		if (!pat)
			return -ERANGE;
		memcpy(pat, b.s.s, b.s.len);
		pat[b.s.len] = '\0';
		r = glob_match(pat, a.s.s, a.s.len);
		break;
	}
	default: break;
	}
	out->i = r;
	return 0;
}

/* OP_TYPE_IN by type keys; hosts without them get the names compared. */
static int eval_type_in(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	const struct expr_host *h = c->h;
	if (!h->type_key)
		return eval_cmp(c, x, o, out);
	int dir = (int)x->i;
	uint32_t key = h->type_key(h->ctx, o), deg = h->degree(h->ctx, o, dir);
	out->i = 0;
	for (uint32_t k = 0; k < deg && !out->i; k++)
		out->i = h->type_key(h->ctx, h->neighbour(h->ctx, o, dir, k)) == key;
	return 0;
}

static int eval_arith(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	struct xval a, b;
	int rc = eval(c, c->e->kids[x->kid0], o, &a);
	if (!rc)
		rc = eval(c, c->e->kids[x->kid0 + 1], o, &b);
	if (rc)
		return rc;
	if (x->t == XT_STR) { /* concatenation */
		struct xstr sa, sb;
		if (str_of(c->a, &a, &sa) || str_of(c->a, &b, &sb))
			return -ERANGE;
		char *p = xarena_alloc(c->a, (size_t)sa.len + sb.len + 1);
		if (!p)
			return -ERANGE;
		memcpy(p, sa.s, sa.len);
		memcpy(p + sa.len, sb.s, sb.len);
		out->s = (struct xstr){ p, sa.len + sb.len };
		return 0;
	}
	/* Checked: a wrapped or made-up value (sizes that turn negative, a
	 * quotient of 0 for x / 0) would classify the object silently wrong;
	 * <error> says the value does not exist.  % fails where / does: C
	 * defines it through the quotient, and INT64_MIN / -1 overflows. */
	switch (x->op) {
	case OP_ADD:
		if (__builtin_add_overflow(a.i, b.i, &out->i))
			return fail_eval(c, x, "integer overflow in +", -EDOM);
		return 0;
	case OP_SUB:
		if (__builtin_sub_overflow(a.i, b.i, &out->i))
			return fail_eval(c, x, "integer overflow in -", -EDOM);
		return 0;
	case OP_MUL:
		if (__builtin_mul_overflow(a.i, b.i, &out->i))
			return fail_eval(c, x, "integer overflow in *", -EDOM);
		return 0;
	case OP_DIV:
		if (b.i == 0)
			return fail_eval(c, x, "division by zero in /", -EDOM);
		if (b.i == -1 && a.i == INT64_MIN)
			return fail_eval(c, x, "integer overflow in /", -EDOM);
		out->i = a.i / b.i;
		return 0;
	default:
		if (b.i == 0)
			return fail_eval(c, x, "division by zero in %", -EDOM);
		if (b.i == -1 && a.i == INT64_MIN)
			return fail_eval(c, x, "integer overflow in %", -EDOM);
		out->i = a.i % b.i;
		return 0;
	}
}

static int eval_str_fn(struct ectx *c, const struct xnode *x, uint32_t o, struct xval *out)
{
	struct xval a, b;
	int rc = eval(c, c->e->kids[x->kid0], o, &a);
	if (!rc)
		rc = eval(c, c->e->kids[x->kid0 + 1], o, &b);
	if (rc)
		return rc;
	switch (x->op) {
	case OP_STARTS: out->i = a.s.len >= b.s.len && !memcmp(a.s.s, b.s.s, b.s.len); return 0;
	case OP_ENDS:
		out->i = a.s.len >= b.s.len && !memcmp(a.s.s + a.s.len - b.s.len, b.s.s, b.s.len);
		return 0;
	case OP_CONTAINS: out->i = has_sub(a.s, b.s); return 0;
	default: return eval_split(c, &a, &b, out);
	}
}

static int eval(struct ectx *c, uint32_t n, uint32_t o, struct xval *out)
{
	const struct xnode *x = &c->e->nodes[n];
	/* an expression without calls or operators has no kids array at all:
	 * no offset may be added to its NULL */
	const uint32_t *k = x->nkids ? c->e->kids + x->kid0 : NULL;
	struct xval a;
	int rc = 0;
	memset(out, 0, sizeof *out);
	out->t = x->t;
	switch (x->op) {
	case OP_INT: out->i = x->i; return 0;
	case OP_STR: out->s = (struct xstr){ x->s, x->slen }; return 0;
	case OP_PROP: return eval_prop(c, x, o, out);
	case OP_NOT:
		if (!(rc = eval(c, k[0], o, &a)))
			out->i = !a.i;
		return rc;
	case OP_NEG:
		if ((rc = eval(c, k[0], o, &a)))
			return rc;
		if (__builtin_sub_overflow((int64_t)0, a.i, &out->i))
			return fail_eval(c, x, "integer overflow in unary -", -EDOM);
		return 0;
	case OP_AND: case OP_OR: /* short-circuit */
		if ((rc = eval(c, k[0], o, &a)))
			return rc;
		if ((x->op == OP_AND) == !a.i) {
			out->i = a.i;
			return 0;
		}
		if (!(rc = eval(c, k[1], o, &a)))
			out->i = a.i;
		return rc;
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_IN:
	case OP_GLOB:
		return eval_cmp(c, x, o, out);
	case OP_TYPE_IN: return eval_type_in(c, x, o, out);
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MOD:
		return eval_arith(c, x, o, out);
	case OP_IF:
		for (uint32_t b = 0; b + 1 < x->nkids; b += 2) {
			if ((rc = eval(c, k[b], o, &a)))
				return rc;
			if (a.i)
				return eval(c, k[b + 1], o, out);
		}
		return eval(c, k[x->nkids - 1], o, out);
	case OP_PATH: case OP_LIST: return eval_collect(c, x, o, out);
	case OP_PARTS: return eval_parts(c, x, o, out);
	case OP_TOSTR:
		if (!(rc = eval(c, k[0], o, &a)))
			rc = str_of(c->a, &a, &out->s);
		return rc;
	case OP_LEN:
		if (!(rc = eval(c, k[0], o, &a)))
			out->i = a.t == XT_STR ? a.s.len : a.n;
		return rc;
	case OP_LOG2:
		if (!(rc = eval(c, k[0], o, &a)))
			out->i = a.i <= 0 ? -1 : 63 - __builtin_clzll((uint64_t)a.i);
		return rc;
	case OP_ANY_REFEREE: case OP_ANY_REFERRER: case OP_COUNT_REFEREES: case OP_COUNT_REFERRERS:
		return eval_neighbours(c, x, o, out);
	case OP_STARTS: case OP_ENDS: case OP_CONTAINS: case OP_SPLIT:
		return eval_str_fn(c, x, o, out);
	}
	return -EINVAL;
}

int expr_eval_fault(const struct expr *e, const struct expr_host *h, uint32_t o,
		    struct xarena *a, struct xval *out, struct expr_fault *fault)
{
	struct expr_fault local;
	struct ectx c = { e, h, a, fault ? fault : &local };
	memset(c.fault, 0, sizeof *c.fault);
	int rc = eval(&c, e->root, o, out);
	/* the arena's refusals come from many places: named here, unplaced */
	if (rc && !c.fault->what)
		c.fault->what = a->need > a->cap ? "the value needs more memory than the arena has"
						 : "evaluation failed";
	return rc;
}

int expr_eval(const struct expr *e, const struct expr_host *h, uint32_t o, struct xarena *a,
	      struct xval *out)
{
	return expr_eval_fault(e, h, o, a, out, NULL);
}
