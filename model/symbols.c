/* symbols.c - see symbols.h */
#include "symbols.h"

#include <inttypes.h>

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
