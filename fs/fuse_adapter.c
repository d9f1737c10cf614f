/* fuse_adapter.c - libfuse high-level front end over fs/tree.h.
 *
 * FUSE_USE_VERSION 3.12 rather than 3.1: threads=N needs
 * fuse_loop_cfg_set_max_threads, which only the 3.12 loop API has.
 *
 * Caching policy (the trace never changes, but file sizes become known
 * only once a file has been rendered):
 *   - names: entry_timeout 60 s, negative_timeout 0 (names appear when
 *     classifiers/ and groups/ are written; a stale positive entry is
 *     harmless: attr_timeout 0 re-asks getattr, which says ENOENT);
 *   - attributes: attr_timeout 0.  The kernel trusts a cached i_size when
 *     it reads through the page cache.  A size once reported exact stays
 *     reported after the render cache evicts the bytes (analyses/rcache.h keeps
 *     every rendered file's size): a file that shrank to size 0 between a
 *     reader's open and its read would read as empty;
 *   - per open: size_exact -> page cache, else direct_io (reads go to us,
 *     EOF is where our bytes end).  Never keep_cache: the same path can
 *     name new bytes (classifiers/NAME written again changes what
 *     only-NAME/count says), and an open without keep_cache drops the
 *     pages an earlier open left.
 *
 * Open files: open checks the node and the access mode; the first read
 * renders the whole file into a buffer owned by the handle (fi->fh), later
 * reads are slices of it, release frees it.  Each open has its own buffer,
 * so interleaved partial readers never see each other's state.
 *
 * Interrupts: a read of a file not in the render cache and every listing
 * run as jobs (fs/jobs.h); the request thread waits in slices and answers
 * EINTR when fuse_interrupted() says the reader was interrupted (Ctrl-C on
 * a slow cat), or when the loop is ending.  Single-threaded mounts (-s)
 * cannot see an interrupt while their one thread waits.
 *
 * Locking: struct mount_ctx is written before the first request and only
 * read afterwards, but for its list of created files (pending_lock).
 * struct open_file.lock guards the handle's fields; lock order:
 * pending_lock, then a handle's lock.  A handle's lock is held while a file
 * found in the render cache is copied and while a write is checked, never while waiting for a
 * job and never while libfuse replies (the high-level API replies after
 * we return).
 */
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)

#include "fs/fuse_adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <malloc.h>

#include <fuse.h>
#include <fuse_lowlevel.h>

#include "fs/jobs.h"
#include "fs/progress_term.h"
#include "model/progress.h"
#include "fs/tree.h"
#include "model/buf.h"
#include "analyses/suspects.h"
#include "analyses/windows.h"
#include "mountopts/mountopts.h"

#define ENTRY_TIMEOUT_S 60.0
/* 0: names appear at run time (classifiers/NAME -> by-NAME/, and under
 * groups/NAME whenever its members change), and the high-level API has no
 * per-entry timeout: a cached "absent" would hide them. */
#define NEGATIVE_TIMEOUT_S 0.0
#define ATTR_TIMEOUT_S 0.0
#define BLOCK_SIZE 4096

struct mount_ctx {
	struct hfs *fs;                   /* owned by heapfs_mount_main */
	struct fuse_session *se;          /* borrowed: to notice the loop ending */
	pthread_mutex_t pending_lock;     /* guards pending (a leaf: no other lock inside) */
	struct open_file *pending;        /* created files the tree has not seen yet */
	struct fuse_conn_info_opts *conn; /* owned by heapfs_mount_main; may be NULL */
	struct timespec time;             /* trace file's mtime: every node's times */
	uid_t uid;
	gid_t gid;
	uint64_t trace_size;
};

struct open_file {
	pthread_mutex_t lock;  /* guards rendered, err, content, dirty, created, job */
	int rendered;          /* 1 once hfs_read was called (or content set) */
	int cached;            /* the file was in the render cache at open: read inline */
	struct job *job;       /* owned reference: the render under way, NULL if none */
	int err;               /* its result */
	int writing;           /* opened for writing: content is the new text */
	int dirty;             /* written since the last commit */
	int created;           /* made by create, not yet committed to the tree */
	int append;            /* O_APPEND: every write goes to the end of content
	                          (the kernel's offset follows a size we report as 0) */
	int written;           /* write() or truncate since open (lock) */
	int failed;            /* a write was refused (lock): a cut last line is dropped */
	int lines;             /* groups/NAME/members: checked line by line */
	size_t checked;        /* lines: content bytes already checked (lock) */
	struct buf content;    /* owned: the whole file */
	struct open_file *next_pending; /* mount_ctx.pending_lock: while created and
	                                   in the pending list */
	int in_pending;        /* mount_ctx.pending_lock */
	char path[];           /* owned (allocated with the struct) */
};

static struct mount_ctx *ctx(void)
{
	return fuse_get_context()->private_data;
}

/* Whatever the tree returns, the kernel gets a negative errno. */
static int as_errno(int rc)
{
	return rc < 0 && rc > -4096 ? rc : -EIO;
}

static void fill_stat(const struct mount_ctx *m, const struct hfs_attr *a, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = a->ino;
	switch (a->kind) {
	case HFS_DIR:
		st->st_mode = S_IFDIR | (a->writable ? 0755 : 0555);
		/* Counting subdirectories would mean listing (a classification
		 * needs a heap state).  1 is the convention for "not counted"
		 * that find/fts honour: with 2 they may skip subdirectories. */
		st->st_nlink = a->nlink ? a->nlink : 1;
		break;
	case HFS_LINK:
		st->st_mode = S_IFLNK | 0777;
		st->st_nlink = 1;
		break;
	case HFS_FILE:
	default:
		st->st_mode = S_IFREG | (a->writable ? 0644 : 0444);
		st->st_nlink = a->nlink ? a->nlink : 1;
		break;
	}
	st->st_size = (off_t)a->size;
	st->st_blksize = BLOCK_SIZE;
	/* Honest block counts: cp and tar treat size > 512 * blocks as sparse. */
	st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_atim = st->st_mtim = st->st_ctim = m->time;
}

/* ---- read-only operations ---------------------------------------------- */

/* ---- files created and not yet handed to the tree ------------------------
 * classifiers/NEW exists for the tree only once its text is committed, but
 * the process that created it stats it first (cp: fstat, which reaches us
 * as a getattr by path, without the handle). */

static void pending_add(struct mount_ctx *m, struct open_file *h)
{
	pthread_mutex_lock(&m->pending_lock);
	h->next_pending = m->pending;
	m->pending = h;
	h->in_pending = 1;
	pthread_mutex_unlock(&m->pending_lock);
}

static void pending_remove(struct mount_ctx *m, struct open_file *h)
{
	pthread_mutex_lock(&m->pending_lock);
	if (h->in_pending) {
		struct open_file **pp = &m->pending;
		while (*pp != h)
			pp = &(*pp)->next_pending;
		*pp = h->next_pending;
		h->in_pending = 0;
	}
	pthread_mutex_unlock(&m->pending_lock);
}

/* The attributes of a file being written (its text so far). */
static void written_attr(struct open_file *h, struct hfs_attr *a)
{
	pthread_mutex_lock(&h->lock);
	*a = (struct hfs_attr){ .kind = HFS_FILE, .ino = 0, .size = h->content.len,
				.size_exact = 1, .writable = 1, .nlink = 1 };
	pthread_mutex_unlock(&h->lock);
}

/* 0 and a if path is a created file not yet committed, else -ENOENT. */
static int pending_attr(struct mount_ctx *m, const char *path, struct hfs_attr *a)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&m->pending_lock);
	for (struct open_file *h = m->pending; h; h = h->next_pending) {
		if (!strcmp(h->path, path)) {
			written_attr(h, a);
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&m->pending_lock);
	return rc;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct mount_ctx *m = ctx();
	struct hfs_attr a;
	struct open_file *h = fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
	int rc;
	if (h && h->writing) {
		/* a file being written: the tree has not seen its text yet */
		written_attr(h, &a);
		uint64_t len = a.size;
		rc = h->created ? 0 : hfs_getattr(m->fs, path, &a);
		a.size = len;
	} else {
		rc = hfs_getattr(m->fs, path, &a);
		if (rc == -ENOENT)
			rc = pending_attr(m, path, &a);
	}
	if (rc != 0)
		return as_errno(rc);
	fill_stat(m, &a, st);
	return 0;
}

static int op_access(const char *path, int mask)
{
	struct hfs_attr a;
	int rc = hfs_getattr(ctx()->fs, path, &a);
	if (rc != 0)
		return as_errno(rc);
	if ((mask & W_OK) && !a.writable)
		return -EROFS;
	if ((mask & X_OK) && a.kind == HFS_FILE)
		return -EACCES;
	return 0;
}

static int op_readlink(const char *path, char *buf, size_t size)
{
	int rc = hfs_readlink(ctx()->fs, path, buf, size);
	return rc < 0 ? as_errno(rc) : 0;
}

static int op_opendir(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	struct hfs_attr a;
	int rc = hfs_getattr(ctx()->fs, path, &a);
	if (rc != 0)
		return as_errno(rc);
	return a.kind == HFS_DIR ? 0 : -ENOTDIR;
}

/* ---- long work off the request thread ----------------------------------
 * Reads of files not yet rendered and directory listings (a listing may
 * need a heap state) run as jobs (fs/jobs.h); the request thread waits in
 * slices and answers EINTR as soon as the kernel says the reader was
 * interrupted, or the loop is ending.  The job finishes into the caches. */

static int request_abandoned(void *vm)
{
	const struct mount_ctx *m = vm;
	return fuse_interrupted() || (m->se && fuse_session_exited(m->se));
}

/* A file's rendering or a directory's listing, owned by its job.  A
 * listing is records of struct hfs_attr followed by the NUL-terminated
 * name. */
struct path_job {
	struct hfs *fs;
	int rc;
	struct buf out;
	char path[];
};

/* A job reports its progress to a record of its own on the board
 * (model/progress.h), which `status` lists as a `work` line while the job
 * runs. */
static struct progress *job_progress_begin(void)
{
	struct progress *p = progress_claim();
	progress_bind(p);
	return p;
}

static void job_progress_end(struct progress *p)
{
	progress_bind(NULL);
	progress_release(p);
}

static void read_job_run(void *arg)
{
	struct path_job *r = arg;
	struct progress *p = job_progress_begin();
	r->rc = hfs_read(r->fs, r->path, &r->out);
	job_progress_end(p);
}

static int list_collect(void *vl, const char *name, const struct hfs_attr *a)
{
	struct path_job *l = vl;
	int rc = buf_put(&l->out, a, sizeof *a);
	if (!rc)
		rc = buf_put(&l->out, name, strlen(name) + 1);
	if (rc)
		l->rc = rc;
	return rc != 0;
}

static void list_job_run(void *arg)
{
	struct path_job *l = arg;
	struct progress *p = job_progress_begin();
	int rc = hfs_readdir(l->fs, l->path, list_collect, l);
	job_progress_end(p);
	if (rc && !l->rc)
		l->rc = rc;
}

static void path_job_drop(void *arg)
{
	struct path_job *r = arg;
	buf_free(&r->out);
	free(r);
}

/* Starts run on path in pool; *arg is the job's argument (job-owned). */
static int path_job_start(struct mount_ctx *m, struct jobs *pool, job_run_fn run,
			  const char *path, struct path_job **arg, struct job **out)
{
	size_t plen = strlen(path) + 1;
	struct path_job *r = malloc(sizeof *r + plen);
	if (!r)
		return -ENOMEM;
	r->fs = m->fs;
	r->rc = 0;
	buf_init(&r->out);
	memcpy(r->path, path, plen);
	*arg = r;
	return jobs_start(pool, run, path_job_drop, r, out);
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	struct mount_ctx *m = ctx();
	struct hfs_attr self;
	int rc = hfs_getattr(m->fs, path, &self);
	if (rc != 0)
		return as_errno(rc);
	if (self.kind != HFS_DIR)
		return -ENOTDIR;
	struct path_job *l;
	struct job *j;
	if ((rc = path_job_start(m, hfs_list_jobs(m->fs), list_job_run, path, &l, &j)) != 0)
		return rc;
	if ((rc = job_wait(j, request_abandoned, m)) == 0)
		rc = l->rc;
	struct stat st;
	fill_stat(m, &self, &st);
	if (!rc && (filler(buf, ".", &st, 0, 0) != 0 || filler(buf, "..", NULL, 0, 0) != 0))
		rc = -ENOMEM;
	int plus = (flags & FUSE_READDIR_PLUS) != 0;
	for (size_t at = 0; !rc && at < l->out.len;) {
		struct hfs_attr a;
		memcpy(&a, l->out.data + at, sizeof a);
		const char *name = (const char *)l->out.data + at + sizeof a;
		at += sizeof a + strlen(name) + 1;
		fill_stat(m, &a, &st);
		/* offset 0: libfuse collects the whole listing and pages it itself */
		if (filler(buf, name, &st, 0, plus ? FUSE_FILL_DIR_PLUS : 0) != 0)
			break;
	}
	job_release(j);
	return rc < 0 ? as_errno(rc) : 0;
}

/* A new open-file handle; writing handles start with empty content that
 * counts as rendered (reads of a file being written see the new text). */
static int handle_new(const char *path, int writing, struct open_file **out)
{
	size_t plen = strlen(path) + 1;
	struct open_file *h = malloc(sizeof *h + plen);
	if (h == NULL)
		return -ENOMEM;
	int rc = pthread_mutex_init(&h->lock, NULL);
	if (rc != 0) {
		free(h);
		return -rc;
	}
	h->rendered = writing;
	h->cached = 0;
	h->job = NULL;
	h->err = 0;
	h->writing = writing;
	h->dirty = 0;
	h->created = 0;
	h->append = 0;
	h->written = 0;
	h->failed = 0;
	h->next_pending = NULL;
	h->in_pending = 0;
	h->checked = 0;
	h->lines = strncmp(path, "/groups/", 8) == 0 && plen > 9 &&
		   strcmp(path + plen - 9, "/members") == 0;
	buf_init(&h->content);
	memcpy(h->path, path, plen);
	*out = h;
	return 0;
}

static void handle_free(struct open_file *h)
{
	if (h->job)
		job_release(h->job); /* a render whose reader left: it ends in the cache */
	buf_free(&h->content);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	struct hfs_attr a;
	int rc = hfs_getattr(ctx()->fs, path, &a);
	if (rc != 0)
		return as_errno(rc);
	if (a.kind == HFS_DIR)
		return -EISDIR;
	int writing = (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC);
	if (writing && !a.writable)
		return -EROFS;
	struct open_file *h;
	rc = handle_new(path, writing, &h);
	if (rc != 0)
		return rc;
	if (writing && !(fi->flags & O_TRUNC)) {
		/* an update in place starts from the current text */
		h->err = hfs_read(ctx()->fs, path, &h->content);
		if (h->err != 0) {
			rc = as_errno(h->err);
			handle_free(h);
			return rc;
		}
		/* committed lines were checked then; a last line without its
		 * newline may still grow */
		h->checked = h->content.len;
		while (h->checked > 0 && h->content.data[h->checked - 1] != '\n')
			h->checked--;
	}
	h->dirty = writing && (fi->flags & O_TRUNC);
	h->append = writing && (fi->flags & O_APPEND);
	h->cached = a.size_exact;
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->direct_io = writing || !a.size_exact || a.changes;
	fi->keep_cache = 0;
	return 0;
}

/* Renders the handle's file once; 0 or negative errno (sticky per open),
 * or -EINTR when the reader was interrupted first (the render goes on and
 * a read after the interruption waits for the same one).  A file found in
 * the render cache at open is copied inline; anything else is a job. */
static int render_once(struct mount_ctx *m, struct open_file *h)
{
	int rc = 0;
	pthread_mutex_lock(&h->lock);
	if (!h->rendered && !h->job && h->cached) {
		h->err = hfs_read(m->fs, h->path, &h->content);
		if (h->err != 0)
			buf_free(&h->content);
		h->rendered = 1;
	}
	struct path_job *arg; /* read back through job_arg once done */
	if (!h->rendered && !h->job)
		rc = path_job_start(m, hfs_jobs(m->fs), read_job_run, h->path, &arg, &h->job);
	struct job *j = h->job;
	pthread_mutex_unlock(&h->lock);
	if (rc)
		return rc;
	/* the handle's reference keeps j alive: release comes after the reads */
	if (j && (rc = job_wait(j, request_abandoned, m)) != 0)
		return rc;
	pthread_mutex_lock(&h->lock);
	if (h->job) {
		struct path_job *r = job_arg(h->job);
		struct buf done = r->out;
		r->out = h->content;
		h->content = done;
		h->err = r->rc;
		if (h->err != 0)
			buf_free(&h->content);
		h->rendered = 1;
		job_release(h->job);
		h->job = NULL;
	}
	rc = h->err;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static int op_read(const char *path, char *out, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	struct open_file *h = (struct open_file *)(uintptr_t)fi->fh;
	int rc = render_once(ctx(), h);
	if (rc != 0)
		return as_errno(rc);
	if (off < 0)
		return -EINVAL;
	/* content never changes after render_once; no lock needed to read it */
	if ((uint64_t)off >= h->content.len)
		return 0;
	size_t n = h->content.len - (size_t)off;
	if (n > size)
		n = size;
	if (n > INT_MAX)
		n = INT_MAX;
	memcpy(out, h->content.data + off, n);
	return (int)n;
}

/* Hands a written file's text to the tree.  The tree checks it (a
 * classifier definition is compiled); a bad text fails with EINVAL, and
 * the tree's message goes to classifiers/errors and, in the foreground,
 * to stderr.  Nothing is handed over before the first write: shells open
 * with O_TRUNC, dup the descriptor and close the original (a flush) before
 * they write, and that flush must not define an empty file.  At release a
 * created file never written is dropped.  After a refused write, a last
 * line without its newline is a cut line: it is not committed. */
static int commit(struct open_file *h, int at_release)
{
	pthread_mutex_lock(&h->lock);
	int rc = 0;
	if (h->writing && h->dirty &&
	    (h->written || (at_release && !h->created && !h->failed))) {
		char msg[512];
		size_t len = h->content.len;
		if (h->failed && h->lines) {
			while (len > 0 && h->content.data[len - 1] != '\n')
				len--;
		}
		rc = hfs_write_file(ctx()->fs, h->path, (const char *)h->content.data, len, msg,
				    sizeof msg);
		h->dirty = 0;
		if (rc == 0 && h->created) {
			h->created = 0;
			pending_remove(ctx(), h);
		}
	}
	pthread_mutex_unlock(&h->lock);
	return rc == 0 ? 0 : as_errno(rc);
}

static int op_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct open_file *h = (struct open_file *)(uintptr_t)fi->fh;
	return h ? commit(h, 0) : 0;
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	return op_flush(path, fi);
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct open_file *h = (struct open_file *)(uintptr_t)fi->fh;
	if (h) {
		commit(h, 1); /* close() already had flush's verdict */
		pending_remove(ctx(), h);
		handle_free(h);
	}
	return 0;
}

static int op_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	struct mount_ctx *m = ctx();
	memset(sv, 0, sizeof *sv);
	sv->f_bsize = BLOCK_SIZE;
	sv->f_frsize = BLOCK_SIZE;
	sv->f_blocks = (m->trace_size + BLOCK_SIZE - 1) / BLOCK_SIZE;
	sv->f_namemax = NAME_MAX;
	return 0;
}

/* ---- write-type operations ----------------------------------------------
 * Only files the tree marks writable (classifiers/NAME) take writes; their
 * text is collected per open and committed at flush (close).  Everything
 * else is read-only. */

#define WRITE_MAX (1u << 20) /* a definition file is text, not data */

/* Checks what a write added (lock held): the complete lines not yet
 * checked of a members file, or a whole definition.  0, or the error that
 * refuses the write. */
static int check_written(struct open_file *h)
{
	char msg[512];
	const char *text = (const char *)h->content.data;
	if (!h->lines)
		return hfs_write_check(ctx()->fs, h->path, text, h->content.len, msg, sizeof msg);
	size_t end = h->content.len;
	while (end > h->checked && text[end - 1] != '\n')
		end--;
	if (end <= h->checked)
		return 0; /* no line completed yet */
	size_t from = hfs_members_checked_whole(ctx()->fs) ? 0 : h->checked;
	int rc = hfs_write_check(ctx()->fs, h->path, text + from, end - from, msg, sizeof msg);
	if (rc == 0)
		h->checked = end;
	return rc;
}

/* A write is all or nothing: it lands in the handle's text only if what
 * it completes checks out, so the writer sees EINVAL (or EFBIG past
 * WRITE_MAX) from write() itself and the text stays as before. */
static int op_write(const char *p, const char *b, size_t s, off_t o, struct fuse_file_info *fi)
{
	(void)p;
	struct open_file *h = (struct open_file *)(uintptr_t)fi->fh;
	if (!h || !h->writing)
		return -EBADF;
	pthread_mutex_lock(&h->lock);
	if (h->append)
		o = (off_t)h->content.len;
	if (o < 0 || (uint64_t)o + s > WRITE_MAX || s > INT_MAX) {
		h->failed = 1;
		pthread_mutex_unlock(&h->lock);
		return -EFBIG;
	}
	size_t end = (size_t)o + s, old_len = h->content.len, old_checked = h->checked;
	size_t keep = (size_t)o < old_len ? (end < old_len ? end : old_len) - (size_t)o : 0;
	char *saved = keep ? malloc(keep) : NULL;
	int rc = keep && !saved ? -ENOMEM : 0;
	if (!rc && end > h->content.len)
		rc = buf_reserve(&h->content, end - h->content.len);
	if (rc == 0) {
		if (keep)
			memcpy(saved, h->content.data + o, keep);
		if (end > h->content.len) {
			memset(h->content.data + h->content.len, 0, end - h->content.len);
			h->content.len = end;
		}
		memcpy(h->content.data + o, b, s);
		if ((size_t)o < h->checked)
			h->checked = 0; /* a rewrite of checked text: check it all again */
		if ((rc = check_written(h)) != 0) {
			if (keep)
				memcpy(h->content.data + o, saved, keep);
			h->content.len = old_len;
			h->checked = old_checked;
			h->failed = 1;
		} else {
			h->dirty = 1;
			h->written = 1;
		}
	}
	free(saved);
	pthread_mutex_unlock(&h->lock);
	return rc ? as_errno(rc) : (int)s;
}

static int op_create(const char *p, mode_t mode, struct fuse_file_info *fi)
{
	(void)mode;
	if (!hfs_can_create(ctx()->fs, p))
		return -EROFS;
	struct open_file *h;
	int rc = handle_new(p, 1, &h);
	if (rc != 0)
		return rc;
	h->created = 1;
	h->dirty = 1;
	pending_add(ctx(), h);
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->direct_io = 1;
	return 0;
}

static int op_mknod(const char *p, mode_t mode, dev_t dev)
{
	(void)p; (void)mode; (void)dev;
	return -EROFS;
}

/* groups/NAME only; the tree refuses anything else with EROFS */
static int op_mkdir(const char *p, mode_t mode)
{
	(void)mode;
	int rc = hfs_mkdir(ctx()->fs, p);
	return rc == 0 ? 0 : as_errno(rc);
}

static int op_unlink(const char *p)
{
	int rc = hfs_unlink(ctx()->fs, p);
	return rc == 0 ? 0 : as_errno(rc);
}

static int op_rmdir(const char *p)
{
	int rc = hfs_rmdir(ctx()->fs, p);
	return rc == 0 ? 0 : as_errno(rc);
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
	(void)from; (void)to; (void)flags;
	return -EROFS;
}

static int op_symlink(const char *target, const char *p)
{
	(void)target; (void)p;
	return -EROFS;
}

static int op_link(const char *from, const char *to)
{
	(void)from; (void)to;
	return -EROFS;
}

static int op_truncate(const char *p, off_t size, struct fuse_file_info *fi)
{
	struct open_file *h = fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
	if (size < 0 || (uint64_t)size > WRITE_MAX)
		return -EFBIG;
	if (h && h->writing) {
		pthread_mutex_lock(&h->lock);
		int rc = 0;
		if ((size_t)size > h->content.len) {
			rc = buf_reserve(&h->content, (size_t)size - h->content.len);
			if (rc == 0)
				memset(h->content.data + h->content.len, 0, (size_t)size - h->content.len);
		}
		if (rc == 0) {
			h->content.len = (size_t)size;
			if (h->checked > h->content.len)
				h->checked = 0;
			h->dirty = 1;
			h->written = 1;
		}
		pthread_mutex_unlock(&h->lock);
		return rc;
	}
	/* By path, on a writable file: the text arrives with the next open
	 * (atomic O_TRUNC is requested at init, so this is rare). */
	struct hfs_attr a;
	int rc = hfs_getattr(ctx()->fs, p, &a);
	if (rc != 0)
		return as_errno(rc);
	return a.writable ? 0 : -EROFS;
}

static int op_chmod(const char *p, mode_t mode, struct fuse_file_info *fi)
{
	(void)p; (void)mode; (void)fi;
	return -EROFS;
}

static int op_chown(const char *p, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	(void)p; (void)uid; (void)gid; (void)fi;
	return -EROFS;
}

static int op_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi)
{
	(void)tv;
	/* `touch` on a writable file is harmless; times are the trace's */
	struct open_file *h = fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
	if (h && h->writing)
		return 0;
	struct hfs_attr a;
	int rc = hfs_getattr(ctx()->fs, p, &a);
	if (rc != 0)
		return as_errno(rc);
	return a.writable ? 0 : -EROFS;
}

static int op_setxattr(const char *p, const char *name, const char *v, size_t s, int flags)
{
	(void)p; (void)name; (void)v; (void)s; (void)flags;
	return -EROFS;
}

static int op_removexattr(const char *p, const char *name)
{
	(void)p; (void)name;
	return -EROFS;
}

/* ---- init and the operation table --------------------------------------- */

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	struct mount_ctx *m = fuse_get_context()->private_data;
	cfg->use_ino = 1;        /* inode numbers from the tree, stable */
	cfg->readdir_ino = 1;
	/* No cfg->intr: libfuse installs its SIGUSR1 handler in fuse_new, so
	 * turning intr on here would make every interrupt kill the daemon with
	 * SIGUSR1.  Long reads poll fuse_interrupted() instead (jobs.h). */
	cfg->entry_timeout = ENTRY_TIMEOUT_S;
	cfg->negative_timeout = NEGATIVE_TIMEOUT_S;
	cfg->attr_timeout = ATTR_TIMEOUT_S;
	cfg->kernel_cache = 0;   /* decided per open: page cache or direct_io */
	cfg->direct_io = 0;
	cfg->auto_cache = 0;
	if (m->conn)
		fuse_apply_conn_info_opts(m->conn, conn);
	/* O_TRUNC arrives with open, so a rewrite of a definition replaces it */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	return m;
}

static const struct fuse_operations heapfs_ops = {
	.init = op_init,
	.getattr = op_getattr,
	.access = op_access,
	.readlink = op_readlink,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.release = op_release,
	.flush = op_flush,
	.fsync = op_fsync,
	.statfs = op_statfs,
	.write = op_write,
	.create = op_create,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.rename = op_rename,
	.symlink = op_symlink,
	.link = op_link,
	.truncate = op_truncate,
	.chmod = op_chmod,
	.chown = op_chown,
	.utimens = op_utimens,
	.setxattr = op_setxattr,
	.removexattr = op_removexattr,
};

/* ---- the process: background start, mount, serve ------------------------ */

/* Background mode.  Forks at once; the parent waits on a pipe for the
 * child's verdict and returns it as its exit status.  The child indexes
 * the trace and mounts while its stderr is still the terminal (errors and
 * progress reach the user), then detaches and sends 0.  Forking before the
 * work (unlike fuse_daemonize after it) keeps every thread the tree may
 * start inside the process that serves.
 * Returns -1 in the child (notify_fd set), or the parent's exit status. */
static int fork_daemon(int *notify_fd)
{
	int p[2];
	if (pipe(p) != 0) {
		fprintf(stderr, "heapfs: pipe: %s\n", strerror(errno));
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "heapfs: fork: %s\n", strerror(errno));
		close(p[0]);
		close(p[1]);
		return 1;
	}
	if (pid == 0) {
		close(p[0]);
		*notify_fd = p[1];
		return -1;
	}
	close(p[1]);
	unsigned char verdict;
	ssize_t n;
	do
		n = read(p[0], &verdict, 1);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == 1)
		return verdict;
	/* the child died without a word */
	int st;
	if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) != 0)
		return WEXITSTATUS(st);
	fprintf(stderr, "heapfs: the mount process died before the mount was ready\n");
	return 1;
}

static void send_verdict(int *notify_fd, int status)
{
	if (*notify_fd < 0)
		return;
	unsigned char v = (unsigned char)status;
	ssize_t n;
	do
		n = write(*notify_fd, &v, 1);
	while (n < 0 && errno == EINTR);
	close(*notify_fd);
	*notify_fd = -1;
}

/* The child after a successful mount: leave the terminal and the cwd. */
static void detach(void)
{
	if (setsid() < 0)
		fprintf(stderr, "heapfs: setsid: %s\n", strerror(errno));
	if (chdir("/") != 0)
		fprintf(stderr, "heapfs: chdir /: %s\n", strerror(errno));
	int fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
}

static int check_mountpoint(const char *mnt)
{
	struct stat st;
	if (stat(mnt, &st) != 0) {
		fprintf(stderr, "heapfs: mountpoint %s: %s\n", mnt, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "heapfs: mountpoint %s: %s\n", mnt, strerror(ENOTDIR));
		return -1;
	}
	return 0;
}

/* A truncated tail and other trace warnings also go to stderr (the status
 * file has them too): the user who mounts must learn that the trace is
 * incomplete.  They are read from /status like any reader would. */
static void print_trace_warnings(struct hfs *fs, const char *trace)
{
	static const char key[] = "warning\t";
	struct buf b;
	buf_init(&b);
	if (hfs_read(fs, "/status", &b) == 0) {
		const char *p = (const char *)b.data, *end = p + b.len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (len >= sizeof key - 1 && memcmp(p, key, sizeof key - 1) == 0)
				fprintf(stderr, "heapfs: %s: warning: %.*s\n", trace,
					(int)(len - (sizeof key - 1)), p + sizeof key - 1);
			p += len + 1;
		}
	}
	buf_free(&b);
}

void heapfs_tree_opts(const struct mountopts *mo, struct win_params *wp, struct sus_params *sp,
		      struct hfs_opts *o)
{
	mountopts_win_params(mo, wp);
	mountopts_sus_params(mo, sp);
	*o = (struct hfs_opts){ .cache_mb = mo->cache_mb, .progress = NULL, .windows = wp,
				.features = mo->features, .classifiers = mo->classifiers,
				.suspects = sp, .hprof_layout = mo->layout,
				.analysis_threads = (unsigned)mo->threads };
}

/* Opens and indexes the trace; on failure the message names the file and
 * the offset.  Progress goes to stderr in the foreground or on a terminal. */
static int open_tree(struct mount_ctx *m, const struct mountopts *mo)
{
	struct win_params wp;
	struct sus_params sp;
	struct hfs_opts o;
	heapfs_tree_opts(mo, &wp, &sp, &o);
	struct htr_err err;
	struct stat st;

	struct progress *pr = NULL;
	struct progress_term *term = NULL;
	if (mo->foreground || isatty(STDERR_FILENO)) {
		o.progress = stderr;
		/* the opening (indexing, a dump's import) as the commands show
		 * it; what the mount computes later is in status */
		pr = progress_claim();
		progress_bind(pr);
		if (progress_term_start(&term, pr, stderr, progress_term_mode_for(STDERR_FILENO, 0)))
			term = NULL;
	}
	if (mo->single_thread)
		o.compute_threads = 1;
	memset(&err, 0, sizeof err);
	int rc = hfs_open(&m->fs, mo->trace, &o, &err);
	progress_term_stop(term);
	progress_bind(NULL);
	progress_release(pr);
	if (rc != 0) {
		char line[sizeof err.msg + PATH_MAX + 64];
		hfs_open_error_text(line, sizeof line, mo->trace, rc, &err);
		fprintf(stderr, "heapfs: %s\n", line);
		m->fs = NULL;
		return -1;
	}
	if (stat(mo->trace, &st) == 0) {
		m->time = st.st_mtim;
		m->trace_size = (uint64_t)st.st_size;
	}
	m->uid = getuid();
	m->gid = getgid();
	print_trace_warnings(m->fs, mo->trace);
	return 0;
}

static int run_loop(struct fuse *fuse, const struct mountopts *mo)
{
	if (mo->single_thread)
		return fuse_loop(fuse);
	struct fuse_loop_config *lc = fuse_loop_cfg_create();
	if (lc == NULL)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(lc, 0);
	fuse_loop_cfg_set_max_threads(lc, (unsigned)mo->fuse_threads);
	fuse_loop_cfg_set_idle_threads(lc, (unsigned)mo->fuse_threads);
	int rc = fuse_loop_mt(fuse, lc);
	fuse_loop_cfg_destroy(lc);
	return rc;
}

static void print_usage_hint(void)
{
	fprintf(stderr, "Try 'heapfs --help' for more information.\n");
}

/* A daemon lives long and frees big blocks all the time (evicted states,
 * analysis temporaries).  glibc's default raises its mmap threshold after
 * each large free, so later large blocks come from the heap, where freed
 * memory is kept; with an arena per thread it is kept many times over.
 * Fixed thresholds and few arenas hand freed memory back to the system:
 * the synthetic soak (16 readers, cache_mb=64) peaked at 539 MB RSS with
 * the defaults and at 265 MB with these. */
static void tune_malloc(void)
{
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
	mallopt(M_ARENA_MAX, 2);
}

int heapfs_mount_main(int argc, char **argv)
{
	struct mountopts mo;
	struct mount_ctx m;
	struct fuse *fuse = NULL;
	int notify_fd = -1, mounted = 0, handlers = 0;
	int status = 1;

	memset(&m, 0, sizeof m);
	pthread_mutex_init(&m.pending_lock, NULL);
	tune_malloc();
	int rc = mountopts_parse(&mo, argc, argv);
	if (rc != 0) {
		if (rc == -EINVAL) {
			fprintf(stderr, "heapfs: %s\n", mo.error);
			print_usage_hint();
			status = MOUNTOPTS_EXIT_USAGE;
		} else {
			fprintf(stderr, "heapfs: %s\n", strerror(-rc));
		}
		goto out;
	}
	if (mo.help) {
		mountopts_print_help(stdout);
		status = 0;
		goto out;
	}
	if (check_mountpoint(mo.mountpoint) != 0)
		goto out;
	/* libfuse unmounts by the path it mounted; the daemon leaves its
	 * working directory (detach), so a relative path must be made whole */
	char *abs = realpath(mo.mountpoint, NULL);
	if (!abs) {
		fprintf(stderr, "heapfs: mountpoint %s: %s\n", mo.mountpoint, strerror(errno));
		goto out;
	}
	free(mo.mountpoint);
	mo.mountpoint = abs;
	if (!mo.foreground) {
		int parent_status = fork_daemon(&notify_fd);
		if (parent_status >= 0) {
			status = parent_status;
			goto out;
		}
	}

	m.conn = fuse_parse_conn_info_opts(&mo.fuse_args);
	if (m.conn == NULL) {
		status = MOUNTOPTS_EXIT_USAGE;
		goto out;
	}
	fuse = fuse_new(&mo.fuse_args, &heapfs_ops, sizeof heapfs_ops, &m);
	if (fuse == NULL) {
		fprintf(stderr, "heapfs: libfuse refused the options (see above)\n");
		status = MOUNTOPTS_EXIT_USAGE;
		goto out;
	}
	if (open_tree(&m, &mo) != 0)
		goto out;
	m.se = fuse_get_session(fuse);
	if (fuse_mount(fuse, mo.mountpoint) != 0) {
		fprintf(stderr, "heapfs: cannot mount %s on %s\n", mo.trace, mo.mountpoint);
		goto out;
	}
	mounted = 1;
	if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
		fprintf(stderr, "heapfs: cannot install signal handlers\n");
		goto out;
	}
	handlers = 1;
	if (notify_fd >= 0) {
		detach();
		send_verdict(&notify_fd, 0);
	}

	/* in the foreground, the log says what the mount computes as it goes:
	 * a line per phase of a second or more, of every piece of work
	 * running (what status lists) */
	struct progress_term *log = NULL;
	if (mo.foreground && progress_term_start_board(&log, stderr))
		log = NULL;
	rc = run_loop(fuse, &mo);
	progress_term_stop(log);
	/* > 0: the signal that stopped the loop, a clean stop */
	status = rc < 0 ? 1 : 0;
	if (rc < 0)
		fprintf(stderr, "heapfs: %s\n", strerror(-rc));
out:
	send_verdict(&notify_fd, status);
	if (handlers)
		fuse_remove_signal_handlers(fuse_get_session(fuse));
	if (mounted)
		fuse_unmount(fuse);
	/* Renders that readers left may still run on the tree: give them a
	 * moment, then leave the tree to the process exit rather than free it
	 * under them. */
	if (m.fs && hfs_stop_jobs(m.fs, 2000) != 0) {
		fprintf(stderr, "heapfs: unmounted; computations still running are abandoned\n");
		m.fs = NULL;
	}
	if (fuse)
		fuse_destroy(fuse);
	if (m.fs)
		hfs_close(m.fs);
	free(m.conn);
	mountopts_free(&mo);
	pthread_mutex_destroy(&m.pending_lock);
	return status;
}
