/* symbols.c - see symbols.h */
#include "symbols.h"

#include <inttypes.h>

#include "heap_state.h"

int sym_method(const struct trace *t, uint32_t method, struct buf *out)
{
	if (method < t->nmethods && t->methods[method].name) {
		const struct trace_method *m = &t->methods[method];
		return buf_printf(out, "%s.%s", m->cls ? m->cls : "?", m->name);
	}
	return buf_printf(out, "<unknown method %" PRIu32 ">", method);
}

int sym_frame(const struct trace *t, const struct htr_site_frame *f, struct buf *out)
{
	int rc = sym_method(t, f->method, out);
	if (!rc && f->line >= 0)
		rc = buf_printf(out, ":%" PRId32, f->line);
	return rc;
}

const char *sym_thread(const struct trace *t, uint32_t thread)
{
	if (thread < t->nthreads && t->threads[thread].name)
		return t->threads[thread].name;
	return "<unknown thread>";
}

int sym_root_detail(const struct trace *t, const struct hs_root *r, struct buf *out)
{
	char scratch[64];
	switch (r->kind) {
	case HTR_ROOT_STATIC: {
		const char *tn = trace_type_name(t, r->type, scratch, sizeof scratch);
		const struct trace_type *ty = r->type < t->ntypes ? &t->types[r->type] : NULL;
		int rc = buf_printf(out, "%s.", tn);
		if (!rc && ty && r->field < ty->nfields && ty->fields[r->field].name)
			return buf_printf(out, "%s", ty->fields[r->field].name);
		return rc ? rc : buf_printf(out, "#%" PRIu32, r->field);
	}
	case HTR_ROOT_THREAD:
	case HTR_ROOT_NATIVE_STACK:
	case HTR_ROOT_THREAD_BLOCK:
		return buf_printf(out, "%s", sym_thread(t, r->thread));
	case HTR_ROOT_LOCAL: {
		int rc = buf_printf(out, "%s #%" PRIu32 " ", sym_thread(t, r->thread), r->depth);
		if (!rc) rc = sym_method(t, r->method, out);
		return rc ? rc : buf_printf(out, " slot %" PRIu32, r->slot);
	}
	case HTR_ROOT_JNI_LOCAL:
		return buf_printf(out, "%s #%" PRIu32, sym_thread(t, r->thread), r->depth);
	case HTR_ROOT_CODE_BLOB:
		return sym_method(t, r->method, out);
	default:
		return 0;
	}
}

int sym_root(const struct trace *t, const struct hs_root *r, struct buf *out)
{
	const char *k = htr_root_kind_name(r->kind);
	int rc = buf_printf(out, "%s", k ? k : "root");
	size_t before = out->len;
	if (!rc)
		rc = buf_putc(out, ' ');
	if (!rc)
		rc = sym_root_detail(t, r, out);
	if (!rc && out->len == before + 1)
		out->len = before; /* no detail: no space */
	return rc;
}

int sym_ref(const struct trace *t, const struct heap_state *s, uint32_t from, uint32_t to,
	    struct buf *out)
{
	uint32_t type = hs_info(s, from)->type;
	for (uint64_t e = s->out_off[from]; e < s->out_off[from + 1]; e++) {
		if (s->out_tgt[e] != to)
			continue;
		uint32_t slot = hs_ref_slot(s, from, e);
		const struct trace_type *ty = type < t->ntypes ? &t->types[type] : NULL;
		if (ty && ty->name && ty->kind != HTR_TYPE_INSTANCE)
			return buf_printf(out, "[%" PRIu32 "]", slot);
		if (ty && ty->name && slot < ty->nfields && ty->fields[slot].name)
			return buf_printf(out, "%s", ty->fields[slot].name);
		return buf_printf(out, "#%" PRIu32, slot);
	}
	return buf_putc(out, '?');
}

int sym_roots_of(const struct trace *t, const struct heap_state *s, uint32_t o, const uint64_t *only,
		 struct buf *out)
{
	int rc = 0, first = 1;
	for (uint32_t r = 0; r < s->nroots && !rc; r++) {
		if (s->roots[r].object != o || (only && !((only[r >> 6] >> (r & 63)) & 1)))
			continue;
		if (!first)
			rc = buf_put(out, "; ", 2);
		if (!rc)
			rc = sym_root(t, &s->roots[r], out);
		first = 0;
	}
	return rc;
}
