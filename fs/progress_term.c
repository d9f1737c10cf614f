/* progress_term.c - see progress_term.h. */
#include "fs/progress_term.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 250
#define REDRAW_AFTER_S 0.5
#define LINE_AFTER_S 1.0

/* HEAPFS_PROGRESS_AFTER_MS: show a phase after that many milliseconds
 * instead (both modes), so that tests see the lines of quick work. */
static double after_s(double dflt)
{
	const char *v = getenv("HEAPFS_PROGRESS_AFTER_MS");
	char *end;
	long ms = v && *v ? strtol(v, &end, 10) : -1;
	return ms >= 0 && v && !*end ? (double)ms / 1000 : dflt;
}
#define LINE_WIDTH 79  /* a redrawn line must not wrap, or \r cannot erase it */

struct progress_term {
	struct progress *p;
	FILE *f;
	enum progress_term_mode mode;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop;            /* under lock */
	int drawn;           /* PT_REDRAW: a line is on the screen */
	uint64_t start_ns;   /* progress_term_start's time */
	double redraw_after, line_after; /* seconds */
	uint64_t printed_seq; /* PT_LINES: the last phase given its line */
	/* the board's mode (p NULL): per record followed, the use of it
	 * (claim time) and the last phase given its line */
	struct board_seen {
		const struct progress *rec;
		uint64_t claimed_ns, printed_seq;
	} seen[PROGRESS_BOARD_SLOTS];
};

enum progress_term_mode progress_term_mode_for(int fd, int quiet)
{
	if (quiet)
		return PT_QUIET;
	const char *term = getenv("TERM");
	if (isatty(fd) && !(term && !strcmp(term, "dumb")))
		return PT_REDRAW;
	return PT_LINES;
}

/* 12345678 -> "12,345,678" */
static void grouped(uint64_t v, char *out, size_t len)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%" PRIu64, v), o = 0;
	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
}

static void duration(double s, char *out, size_t len)
{
	unsigned long t = (unsigned long)(s + 0.5);
	if (s < 9.95)
		snprintf(out, len, "%.1f s", s < 0 ? 0 : s);
	else if (t < 60)
		snprintf(out, len, "%lu s", t);
	else if (t < 3600)
		snprintf(out, len, "%lu min %lu s", t / 60, t % 60);
	else
		snprintf(out, len, "%lu h %lu min", t / 3600, t / 60 % 60);
}

void progress_term_format(const struct progress_view *v, char *out, size_t len)
{
	char done[32], total[32], left[32], tail[128];
	grouped(v->done, done, sizeof done);
	if (!v->total && !v->done) { /* nothing counted: how long it has run */
		duration(v->phase_s, left, sizeof left);
		snprintf(tail, sizeof tail, ", %s", left);
	} else if (!v->total) {
		snprintf(tail, sizeof tail, ": %s", done);
	} else {
		grouped(v->total, total, sizeof total);
		unsigned pct = v->done >= v->total ? 100 : (unsigned)(v->done * 100 / v->total);
		int n = snprintf(tail, sizeof tail, ": %s/%s (%u%%)", done, total, pct);
		if (v->eta_s >= 0) {
			duration(v->eta_s, left, sizeof left);
			snprintf(tail + n, sizeof tail - (size_t)n, ", about %s left", left);
		}
	}
	/* the numbers are what matters: a line too long for len loses the end
	 * of the phase's name ("...") rather than them */
	size_t tl = strlen(tail), pl = strlen(v->phase);
	if (!len)
		return;
	if (pl + tl < len) {
		snprintf(out, len, "%s%s", v->phase, tail);
	} else if (tl + 4 < len) {
		size_t keep = len - 1 - tl - 3;
		snprintf(out, len, "%.*s...%s", (int)keep, v->phase, tail);
	} else {
		snprintf(out, len, "%s", tail);
	}
}

/* The board's mode: v's line once its phase has run line_after, as
 * PT_LINES gives a single record's (each record is always at one place
 * on the board, so one entry per record pointer). */
static int show_board_one(void *ctx, const struct progress_view *v)
{
	struct progress_term *t = ctx;
	struct board_seen *e = NULL;
	for (int i = 0; i < PROGRESS_BOARD_SLOTS && !e; i++)
		if (t->seen[i].rec == v->rec || !t->seen[i].rec)
			e = &t->seen[i];
	if (!e)
		return 0;
	if (e->rec != v->rec || e->claimed_ns != v->claimed_ns)
		*e = (struct board_seen){ v->rec, v->claimed_ns, 0 };
	if (v->seq == e->printed_seq || v->phase_s < t->line_after)
		return 0;
	char line[256];
	progress_term_format(v, line, sizeof line);
	fprintf(t->f, "heapfs: %s\n", line);
	fflush(t->f);
	e->printed_seq = v->seq;
	return 0;
}

static void show(struct progress_term *t)
{
	struct progress_view v;
	if (!t->p) {
		progress_each(show_board_one, t);
		return;
	}
	progress_read(t->p, &v);
	if (!v.seq)
		return;
	char line[256];
	/* "heapfs: " and the line fit LINE_WIDTH on a terminal */
	progress_term_format(&v, line, t->mode == PT_REDRAW ? LINE_WIDTH - 8 + 1 : sizeof line);
	if (t->mode == PT_REDRAW) {
		if ((double)(progress_now_ns() - t->start_ns) * 1e-9 < t->redraw_after)
			return;
		fprintf(t->f, "\r\033[Kheapfs: %s", line);
		fflush(t->f);
		t->drawn = 1;
	} else if (v.seq != t->printed_seq && v.phase_s >= t->line_after) {
		fprintf(t->f, "heapfs: %s\n", line);
		fflush(t->f);
		t->printed_seq = v.seq;
	}
}

/* progress_note's hook: the line goes above the redrawn one. */
static void note(void *ctx, FILE *f, const char *text)
{
	struct progress_term *t = ctx;
	pthread_mutex_lock(&t->lock);
	if (f == t->f && t->drawn) {
		fputs("\r\033[K", f);
		t->drawn = 0; /* drawn again at the next tick */
	}
	fputs(text, f);
	pthread_mutex_unlock(&t->lock);
}

static int no_delay(const struct progress_term *t)
{
	return (t->mode == PT_LINES ? t->line_after : t->redraw_after) <= 0;
}

/* The phase hook when phases show with no delay: every phase's line as it
 * begins (its count is 0 then: the name is what the line says). */
static void phase_begun(void *ctx, struct progress *p)
{
	struct progress_term *t = ctx;
	if (t->p && p != t->p)
		return;
	pthread_mutex_lock(&t->lock);
	if (t->p) {
		show(t);
	} else {
		struct progress_view v;
		progress_read(p, &v);
		show_board_one(t, &v);
	}
	pthread_mutex_unlock(&t->lock);
}

static void *run(void *arg)
{
	struct progress_term *t = arg;
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&t->wake, &t->lock, &until);
		if (!t->stop)
			show(t);
	}
	if (t->drawn) {
		fputs("\r\033[K", t->f);
		fflush(t->f);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static int term_start(struct progress_term **out, struct progress *p, FILE *f, enum progress_term_mode mode)
{
	struct progress_term *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	t->p = p;
	t->f = f;
	t->mode = mode;
	t->start_ns = progress_now_ns();
	t->redraw_after = after_s(REDRAW_AFTER_S);
	t->line_after = after_s(LINE_AFTER_S);
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	int rc = pthread_create(&t->thread, NULL, run, t);
	if (!rc && mode == PT_REDRAW)
		progress_set_note_hook(note, t);
	if (!rc && no_delay(t))
		progress_set_phase_hook(phase_begun, t);
	if (rc) {
		pthread_cond_destroy(&t->wake);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return -rc;
	}
	*out = t;
	return 0;
}

int progress_term_start(struct progress_term **out, struct progress *p, FILE *f, enum progress_term_mode mode)
{
	*out = NULL;
	if (mode == PT_QUIET || !p)
		return 0;
	return term_start(out, p, f, mode);
}

int progress_term_start_board(struct progress_term **out, FILE *f)
{
	*out = NULL;
	return term_start(out, NULL, f, PT_LINES);
}

void progress_term_stop(struct progress_term *t)
{
	if (!t)
		return;
	if (t->mode == PT_REDRAW)
		progress_set_note_hook(NULL, NULL);
	if (no_delay(t))
		progress_set_phase_hook(NULL, NULL);
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
