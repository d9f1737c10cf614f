/* engine.c - see engine.h */
#include "engine.h"
#include "analyses/parallel.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analyses/adhoc.h"
#include "analyses/classify_ext.h"
#include "analyses/features.h"
#include "analyses/winstate.h"
#include "model/mpar.h"

void eng_init(struct engine *en)
{
	memset(en, 0, sizeof *en);
	pthread_mutex_init(&en->err_lock, NULL);
}

/* The registry: built-in classifiers (with the feature map, if any), the
 * analysis classifiers, then the user's definitions, so that users cannot
 * take the others' names. */
static int open_classifiers(struct engine *en, const struct eng_opts *o, struct htr_err *err)
{
	struct feature_map fm;
	char msg[sizeof err->msg];
	int have_fm = 0, rc;
	if (o->features) {
		if ((rc = feature_map_load(o->features, &fm, msg, sizeof msg)))
			return htr_errf_as(err, HTR_ERR_WHOLE, rc, "features=%s: %s", o->features, msg);
		have_fm = 1;
	}
	if ((rc = cls_registry_init(&en->reg, en->trace, have_fm ? &fm : NULL))) {
		if (have_fm)
			feature_map_free(&fm);
		return htr_errf(err, rc, 0, "cannot initialize classifiers");
	}
	en->reg_ready = 1;
	if ((rc = eng_register_analysis_classifiers(en)))
		return htr_errf(err, rc, 0, "cannot register the analysis classifiers");
	if (o->classifiers && (rc = cls_define_file(&en->reg, o->classifiers, msg, sizeof msg)))
		return htr_errf_as(err, HTR_ERR_WHOLE, rc, "classifiers=%s: %s", o->classifiers, msg);
	return 0;
}

static int adhoc_bits_cb(void *ctx, uint32_t version, const struct heap_state *s, uint64_t *bits)
{
	return adhoc_bits(ctx, version, s, bits);
}

int eng_open(struct engine *en, const char *trace_path, const struct eng_opts *o,
	     struct htr_err *err)
{
	int rc;
	eng_init(en);
	en->progress = o->progress;
	if (o->suspects)
		en->sus = *o->suspects;
	else
		sus_params_default(&en->sus);
	en->state_budget = o->state_budget;
	en->threads = par_threads(o->threads);
	struct trace_open_opts to = { .progress = o->progress, .hprof_layout = o->hprof_layout,
				      .threads = en->threads };
	if ((rc = trace_open(&en->trace, trace_path, &to, err)))
		goto fail;
	if ((rc = state_cache_new(&en->states, en->trace, en->state_budget, en->threads))) {
		htr_errf(err, rc, 0, "cannot create the state cache");
		goto fail;
	}
	if ((rc = rcache_new(&en->rc, o->result_budget))) {
		htr_errf(err, rc, 0, "out of memory");
		goto fail;
	}
	if ((rc = open_classifiers(en, o, err)))
		goto fail;
	if ((rc = win_state_new(&en->win, o->windows)) || (rc = adhoc_new(&en->adhoc))) {
		htr_errf(err, rc, 0, "out of memory");
		goto fail;
	}
	/* groups/NAME: the registry asks the ad-hoc store for its members */
	en->reg.adhoc_bits = adhoc_bits_cb;
	en->reg.adhoc_ctx = en->adhoc;
	return 0;
fail:
	eng_destroy(en);
	return rc;
}

void eng_destroy(struct engine *en)
{
	if (!en->trace && !en->reg_ready && !en->states)
		goto out; /* never opened, or destroyed already */
	adhoc_free(en->adhoc);
	win_state_free(en->win);
	if (en->reg_ready)
		cls_registry_destroy(&en->reg);
	if (en->rc)
		rcache_free(en->rc);
	if (en->states)
		state_cache_free(en->states);
	if (en->trace)
		trace_close(en->trace);
out:
	pthread_mutex_destroy(&en->err_lock);
	memset(en, 0, sizeof *en);
}

int eng_result_get(struct engine *en, const struct result_key *k, rc_compute_fn fn, void *ctx,
		   struct rc_entry **e)
{
	/* "\x01" starts no path: results never meet rendered files */
	struct buf key;
	buf_init(&key);
	int rc = buf_printf(&key, "\x01%d/%" PRIu32 "/%" PRIu32 "/%" PRIu32 "/%d/", (int)k->what,
			    k->gci, k->gci2, k->cls, k->variant);
	if (!rc && k->chain)
		rc = chain_key(k->chain, &key);
	if (!rc)
		rc = buf_putc(&key, '\0');
	if (!rc)
		rc = rcache_get(en->rc, (const char *)key.data, fn, ctx, e);
	buf_free(&key);
	return rc;
}

void eng_put(struct engine *en, struct rc_entry *e)
{
	if (e)
		rcache_put(en->rc, e);
}

void eng_set_error(struct engine *en, const struct htr_err *err)
{
	pthread_mutex_lock(&en->err_lock);
	snprintf(en->last_error, sizeof en->last_error, "%s: offset %" PRIu64 ": %s",
		 en->trace->path, err->offset, err->msg);
	pthread_mutex_unlock(&en->err_lock);
}

int eng_last_error(struct engine *en, char *buf, size_t len)
{
	pthread_mutex_lock(&en->err_lock);
	snprintf(buf, len, "%s", en->last_error);
	int have = en->last_error[0] != '\0';
	pthread_mutex_unlock(&en->err_lock);
	return have;
}

int eng_state_get(struct engine *en, uint32_t gci, const struct heap_state **s)
{
	struct htr_err err;
	memset(&err, 0, sizeof err);
	int rc = state_cache_get(en->states, gci, s, &err);
	if (rc == 0 || rc == -ENOMEM)
		return rc;
	eng_set_error(en, &err);
	if (en->progress)
		fprintf(en->progress, "heapfs: %s: offset %" PRIu64 ": %s\n", en->trace->path,
			err.offset, err.msg);
	return -EIO;
}

void eng_state_put(struct engine *en, const struct heap_state *s)
{
	state_cache_put(en->states, s);
}

int eng_gc_has_graph(const struct engine *en, uint32_t gci)
{
	return gci < en->trace->ngcs && (en->trace->gcs[gci].flags & HTR_GC_HAS_GRAPH);
}

/* ---- windows (analyses/winstate.h) over the engine's states ---- */

static int win_state_get_cb(void *ctx, uint32_t g, const struct heap_state **s)
{
	return eng_state_get(ctx, g, s);
}

static void win_state_put_cb(void *ctx, const struct heap_state *s)
{
	eng_state_put(ctx, s);
}

static void win_damage_cb(void *ctx, const struct htr_err *err)
{
	eng_set_error(ctx, err);
}

static struct win_inputs win_inputs_of(struct engine *en)
{
	return (struct win_inputs){ .t = en->trace, .threads = en->threads,
				    .state_get = win_state_get_cb, .state_put = win_state_put_cb,
				    .damage = win_damage_cb, .ctx = en };
}

int eng_reachable_series(struct engine *en, const uint64_t **reachable)
{
	struct win_inputs in = win_inputs_of(en);
	return win_state_reachable(en->win, &in, reachable);
}

int eng_windows_results(struct engine *en, const struct win_result **res)
{
	struct win_inputs in = win_inputs_of(en);
	return win_state_results(en->win, &in, res);
}
