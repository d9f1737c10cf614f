/* progress.c - see progress.h. */
#include "model/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static __thread struct progress *bound;

/* The phase hook (progress_set_phase_hook): under its lock while it runs,
 * so that clearing it waits for a call under way. */
static pthread_mutex_t phase_hook_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*phase_fn)(void *ctx, struct progress *p);
static void *phase_ctx;
static int phase_hooked; /* atomic: the unhooked case takes no lock */

void progress_set_phase_hook(void (*fn)(void *ctx, struct progress *p), void *ctx)
{
	pthread_mutex_lock(&phase_hook_lock);
	phase_fn = fn;
	phase_ctx = ctx;
	__atomic_store_n(&phase_hooked, fn != NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&phase_hook_lock);
}

static void call_phase_hook(struct progress *p)
{
	if (!__atomic_load_n(&phase_hooked, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&phase_hook_lock);
	if (phase_fn)
		phase_fn(phase_ctx, p);
	pthread_mutex_unlock(&phase_hook_lock);
}

/* The board: records are claimed and released under board_lock; a claimed
 * record's own fields are under its own lock (progress.h). */
static pthread_mutex_t board_lock = PTHREAD_MUTEX_INITIALIZER;
static struct progress board[PROGRESS_BOARD_SLOTS];
static pthread_once_t board_once = PTHREAD_ONCE_INIT;

static void board_init(void)
{
	for (int i = 0; i < PROGRESS_BOARD_SLOTS; i++)
		pthread_mutex_init(&board[i].lock, NULL);
}

uint64_t progress_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct progress *progress_here(void)
{
	return bound;
}

struct progress *progress_bind(struct progress *p)
{
	struct progress *prev = bound;
	bound = p;
	return prev;
}

void progress_phase(struct progress *p, uint64_t total, const char *fmt, ...)
{
	if (!p)
		return;
	char name[PROGRESS_PHASE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	uint64_t now = progress_now_ns();
	pthread_mutex_lock(&p->lock);
	memcpy(p->phase, name, sizeof name);
	p->total = total;
	p->seq++;
	p->phase_start_ns = now;
	__atomic_store_n(&p->done, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	call_phase_hook(p);
}

void progress_read(struct progress *p, struct progress_view *v)
{
	uint64_t now = progress_now_ns();
	pthread_mutex_lock(&p->lock);
	memcpy(v->phase, p->phase, sizeof v->phase);
	v->total = p->total;
	v->seq = p->seq;
	v->phase_s = p->seq ? (double)(now - p->phase_start_ns) * 1e-9 : 0;
	v->total_s = (double)(now - p->start_ns) * 1e-9;
	v->rec = p;
	v->claimed_ns = p->start_ns;
	v->done = __atomic_load_n(&p->done, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	/* the rate so far in this phase; nothing to say before a little of it
	 * has run (the first moments are set-up, not the phase's pace) */
	v->eta_s = -1;
	if (v->total && v->done && v->done <= v->total && v->phase_s >= 0.3)
		v->eta_s = v->phase_s * (double)(v->total - v->done) / (double)v->done;
}

struct progress *progress_claim(void)
{
	pthread_once(&board_once, board_init);
	struct progress *p = NULL;
	pthread_mutex_lock(&board_lock);
	for (int i = 0; i < PROGRESS_BOARD_SLOTS && !p; i++)
		if (!board[i].in_use) {
			p = &board[i];
			p->in_use = 1;
		}
	pthread_mutex_unlock(&board_lock);
	if (!p)
		return NULL;
	uint64_t now = progress_now_ns();
	pthread_mutex_lock(&p->lock);
	p->phase[0] = '\0';
	p->total = 0;
	p->seq = 0;
	p->start_ns = p->phase_start_ns = now;
	__atomic_store_n(&p->done, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	return p;
}

void progress_release(struct progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&board_lock);
	p->in_use = 0;
	pthread_mutex_unlock(&board_lock);
}

int progress_each(int (*fn)(void *ctx, const struct progress_view *v), void *ctx)
{
	pthread_once(&board_once, board_init);
	int rc = 0;
	for (int i = 0; i < PROGRESS_BOARD_SLOTS && !rc; i++) {
		/* read under the board's lock so that a record is not released
		 * and claimed again by other work while it is read */
		struct progress_view v;
		int show = 0;
		pthread_mutex_lock(&board_lock);
		if (board[i].in_use) {
			progress_read(&board[i], &v);
			show = v.seq > 0;
		}
		pthread_mutex_unlock(&board_lock);
		if (show)
			rc = fn(ctx, &v);
	}
	return rc;
}

/* The note hook: set and read under its own lock, which progress_note
 * holds while the hook prints, so that a reporter stopping (and clearing
 * the hook) waits for a note under way. */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*note_fn)(void *ctx, FILE *f, const char *text);
static void *note_ctx;

void progress_set_note_hook(void (*fn)(void *ctx, FILE *f, const char *text), void *ctx)
{
	pthread_mutex_lock(&note_lock);
	note_fn = fn;
	note_ctx = ctx;
	pthread_mutex_unlock(&note_lock);
}

void progress_note(FILE *f, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&note_lock);
	if (note_fn)
		note_fn(note_ctx, f, text);
	else
		fputs(text, f);
	fflush(f);
	pthread_mutex_unlock(&note_lock);
}
