/* progress_term.h - a command's progress on its standard error.
 *
 * A thread that reads a struct progress (model/progress.h) while the
 * command works and shows it:
 *   - on a terminal, one line redrawn in place (at most every 250 ms):
 *     the phase, done/total with a percentage, and the time left at the
 *     phase's rate so far; shown once the reporter has run 0.5 s, so that
 *     quick work prints nothing, and erased when it stops, so that what the
 *     command prints is all that stays (a command that prints as it goes
 *     stops its reporter before each print and starts one after);
 *   - elsewhere (a pipe, a file, a CI log), one line per phase that lasts
 *     at least a second, written when it has run that second;
 *   - with -q (quiet), nothing.
 * Output goes to stderr only; stdout stays the command's data.
 * A mount in the foreground logs what it computes for its files the
 * second way, for every record on the board (every piece of work running:
 * what `status` lists), through progress_term_start_board.
 *
 * Ownership: progress_term_start borrows p and f until progress_term_stop,
 * which joins the thread and frees it.
 */
#ifndef HEAPFS_FS_PROGRESS_TERM_H
#define HEAPFS_FS_PROGRESS_TERM_H

#include <stdio.h>

#include "model/progress.h"

struct progress_term;

enum progress_term_mode { PT_QUIET, PT_LINES, PT_REDRAW };

/* The mode for stderr: quiet when asked, else redraw on a terminal
 * (TERM not "dumb"), else lines. */
enum progress_term_mode progress_term_mode_for(int fd, int quiet);

/* Starts showing p on f.  *out is NULL (and 0 returned) for PT_QUIET or a
 * NULL p; -errno when the thread cannot start (the command then runs
 * without progress). */
int progress_term_start(struct progress_term **out, struct progress *p, FILE *f, enum progress_term_mode mode);
void progress_term_stop(struct progress_term *t);

/* Starts logging on f, one line per phase that lasts at least a second
 * (HEAPFS_PROGRESS_AFTER_MS: that long), of every record on the board.
 * -errno when the thread cannot start. */
int progress_term_start_board(struct progress_term **out, FILE *f);

/* The line for v in out (no newline): "PHASE: DONE/TOTAL (P%), about T
 * left" or shorter when the total or the rate is not known. */
void progress_term_format(const struct progress_view *v, char *out, size_t len);

#endif
