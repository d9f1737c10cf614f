/* files.c - see files.h. */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Room kept for ".", "." and the suffix in a temporary name. */
#define TMP_SUFFIX_LEN 6
#define TMP_BASE_MAX (NAME_MAX - TMP_SUFFIX_LEN - 2)
#define TMP_TRIES 100

const char *file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "is a regular file";
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO";
	if (S_ISCHR(mode))
		return "is a character device";
	if (S_ISBLK(mode))
		return "is a block device";
	if (S_ISSOCK(mode))
		return "is a socket";
	return "is not a regular file";
}

static int not_regular(mode_t mode, const char **what)
{
	*what = file_kind(mode);
	return S_ISDIR(mode) ? -EISDIR : -EINVAL;
}

int file_open_regular(const char *path, struct stat *st_out, const char **what)
{
	struct stat st, fst;
	/* stat first: opening a FIFO blocks until a writer comes, and opening
	 * a device may do something; neither is ever opened */
	if (stat(path, &st) != 0) {
		*what = strerror(errno);
		return -errno;
	}
	if (!S_ISREG(st.st_mode))
		return not_regular(st.st_mode, what);
	/* O_NONBLOCK: the path may have been replaced by a FIFO since */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		*what = strerror(errno);
		return -errno;
	}
	if (fstat(fd, &fst) != 0) {
		int rc = -errno;
		*what = strerror(errno);
		close(fd);
		return rc;
	}
	if (!S_ISREG(fst.st_mode)) {
		close(fd);
		return not_regular(fst.st_mode, what);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (st_out)
		*st_out = fst;
	*what = "";
	return fd;
}

int file_read_capped(const char *path, size_t max, struct buf *out, char *msg, size_t msglen)
{
	struct stat st;
	const char *what;
	int rc = 0;
	int fd = file_open_regular(path, &st, &what);
	if (fd < 0) {
		snprintf(msg, msglen, "%s", what);
		return fd;
	}
	if ((uint64_t)st.st_size > max) {
		rc = -EFBIG;
		goto out;
	}
	/* the size can change while we read: read at most max + 1 bytes */
	size_t got = 0;
	for (;;) {
		if ((rc = buf_reserve(out, 4096)))
			goto out;
		size_t room = out->cap - out->len;
		if (room > max + 1 - got)
			room = max + 1 - got;
		ssize_t k = read(fd, out->data + out->len, room);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			goto out;
		}
		if (k == 0)
			break;
		out->len += (size_t)k;
		got += (size_t)k;
		if (got > max) {
			rc = -EFBIG;
			goto out;
		}
	}
out:
	if (rc == -EFBIG)
		snprintf(msg, msglen, "is larger than %zu bytes (the limit for this file)", max);
	else if (rc)
		snprintf(msg, msglen, "%s", strerror(-rc));
	close(fd);
	return rc;
}

/* ---- writing ---------------------------------------------------------------------------- */

/* The temporary file the signal handler removes: one outfile at a time
 * (the commands write one output each); a second one at the same time
 * (another thread) goes unguarded.  Set and cleared atomically. */
static char *sig_tmp;
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])
static int sig_installed[NSIGNALS];

static void on_signal(int sig)
{
	char *p = __atomic_load_n(&sig_tmp, __ATOMIC_SEQ_CST);
	if (p)
		unlink(p);
	/* die of the signal, as without the handler */
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Installs the handler where the signal has its default action (a daemon
 * or a test harness that handles it itself keeps its handler). */
static void guard_signals(char *tmp)
{
	char *none = NULL;
	if (!__atomic_compare_exchange_n(&sig_tmp, &none, tmp, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	for (size_t i = 0; i < NSIGNALS; i++) {
		struct sigaction old, sa;
		sig_installed[i] = 0;
		if (sigaction(cleanup_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		if (sigaction(cleanup_signals[i], &sa, NULL) == 0)
			sig_installed[i] = 1;
	}
}

static void unguard_signals(const char *tmp)
{
	char *mine = (char *)tmp;
	if (!tmp || !__atomic_compare_exchange_n(&sig_tmp, &mine, NULL, 0, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
		return;
	for (size_t i = 0; i < NSIGNALS; i++) {
		if (sig_installed[i])
			signal(cleanup_signals[i], SIG_DFL);
		sig_installed[i] = 0;
	}
}

static void random_suffix(char out[TMP_SUFFIX_LEN + 1])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned counter;
	unsigned char r[TMP_SUFFIX_LEN];
	if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20) ^ (uint64_t)++counter << 40;
		for (size_t i = 0; i < sizeof r; i++, x >>= 6)
			r[i] = (unsigned char)x;
	}
	for (size_t i = 0; i < TMP_SUFFIX_LEN; i++)
		out[i] = set[r[i] % (sizeof set - 1)];
	out[TMP_SUFFIX_LEN] = '\0';
}

/* The target to replace: path itself, or what its symbolic link names (a
 * rename would replace the link, not the file the user means).  *exists
 * and *mode: whether it is there and its permission bits. */
static int resolve_target(const char *path, char **out, int *exists, mode_t *mode, char *msg,
			  size_t msglen)
{
	struct stat st;
	*exists = 0;
	*mode = 0644;
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT) {
			snprintf(msg, msglen, "%s", strerror(errno));
			return -errno;
		}
		*out = strdup(path);
		return *out ? 0 : -ENOMEM;
	}
	if (S_ISLNK(st.st_mode)) {
		if (!(*out = realpath(path, NULL))) {
			int rc = -errno;
			snprintf(msg, msglen, "a symbolic link that cannot be followed: %s",
				 strerror(errno));
			return rc;
		}
		if (stat(*out, &st) != 0) {
			int rc = -errno;
			snprintf(msg, msglen, "%s", strerror(errno));
			free(*out);
			*out = NULL;
			return rc;
		}
	} else if (!(*out = strdup(path))) {
		return -ENOMEM;
	}
	if (!S_ISREG(st.st_mode)) {
		const char *what;
		int rc = not_regular(st.st_mode, &what);
		snprintf(msg, msglen, "%s, not a regular file (heapfs replaces only a regular file "
			 "with its output)", what);
		free(*out);
		*out = NULL;
		return rc;
	}
	*exists = 1;
	*mode = st.st_mode & 07777;
	return 0;
}

int outfile_begin(struct outfile *f, const char *path, char *msg, size_t msglen)
{
	int exists, rc;
	mode_t mode;
	char suffix[TMP_SUFFIX_LEN + 1];
	memset(f, 0, sizeof *f);
	f->fd = -1;
	msg[0] = '\0';
	if ((rc = resolve_target(path, &f->path, &exists, &mode, msg, msglen)))
		goto fail;
	const char *slash = strrchr(f->path, '/');
	int dirlen = slash ? (int)(slash - f->path + 1) : 0;
	const char *base = slash ? slash + 1 : f->path;
	int baselen = (int)strlen(base) > TMP_BASE_MAX ? TMP_BASE_MAX : (int)strlen(base);
	size_t len = strlen(f->path) + TMP_SUFFIX_LEN + 3;
	if (!(f->tmp = malloc(len))) {
		rc = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < TMP_TRIES; i++) {
		random_suffix(suffix);
		snprintf(f->tmp, len, "%.*s.%.*s.%s", dirlen, f->path, baselen, base, suffix);
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (f->fd >= 0 || errno != EEXIST)
			break;
	}
	if (f->fd < 0) {
		rc = -errno;
		snprintf(msg, msglen, "cannot create a temporary file beside it: %s", strerror(errno));
		goto fail;
	}
	guard_signals(f->tmp);
	/* an existing file keeps its permissions (one made private stays so) */
	if (exists && fchmod(f->fd, mode) != 0) {
		rc = -errno;
		snprintf(msg, msglen, "cannot set the permissions of the temporary file: %s",
			 strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (rc == -ENOMEM && !msg[0])
		snprintf(msg, msglen, "out of memory");
	outfile_abort(f);
	return rc;
}

int outfile_commit(struct outfile *f, char *msg, size_t msglen)
{
	int rc = 0;
	if (fsync(f->fd) != 0 && errno != EINVAL) {
		rc = -errno;
		snprintf(msg, msglen, "cannot write the file to disk: %s", strerror(errno));
		goto out;
	}
	if (close(f->fd) != 0) {
		f->fd = -1;
		rc = -errno;
		snprintf(msg, msglen, "cannot write the file to disk: %s", strerror(errno));
		goto out;
	}
	f->fd = -1;
	if (rename(f->tmp, f->path) != 0) {
		rc = -errno;
		snprintf(msg, msglen, "cannot rename the finished file over it: %s", strerror(errno));
		goto out;
	}
	/* The directory is not synced: a crash after the rename shows the old
	 * file or the new one, each whole, which is all the contract asks;
	 * syncing it would cost a journal commit per command. */
	unguard_signals(f->tmp);
	free(f->tmp);
	f->tmp = NULL;
out:
	outfile_abort(f);
	return rc;
}

void outfile_abort(struct outfile *f)
{
	/* fd belongs to f only while tmp exists (a zeroed f has fd 0) */
	if (f->tmp && f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp) {
		unlink(f->tmp);
		unguard_signals(f->tmp);
	}
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
}
