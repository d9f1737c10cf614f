/* fuzz_common.h - what every fuzz target of tests/fuzz/ shares: sanitizer
 * defaults, libFuzzer defaults, and the scratch files of the targets whose
 * readers take a path.  Included by exactly one .c per target (everything
 * here is static).
 *
 * Each target defines LLVMFuzzerInitialize as
 *   return fuzz_init(argc, argv, (const char *const[]){ "-max_len=N", ..., NULL });
 * so that a bare `build-fuzz/fuzz_X CORPUS` runs as `make fuzz` does.
 */
#ifndef HEAPFS_FUZZ_COMMON_H
#define HEAPFS_FUZZ_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* UBSan stops at the first report: without this, undefined behaviour is
 * printed and the run goes on, and the input that caused it is lost. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

/* ASan's defaults cost the trace readers half their speed: every frame
 * iterator maps megabytes of buffers (model/htr_reader.c), and ASan maps,
 * poisons and unmaps each such block afresh.  A 16 MB quarantine (256 by
 * default) and shadow cleared by memset rather than by remapping halve
 * that.  Freed blocks still wait out 16 MB of later frees, hundreds of
 * inputs of these sizes, before reuse, so a use after free within an
 * input is still caught. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=16:clear_shadow_mmap_threshold=1073741824";
}

/* Inserts defaults right after argv[0], so that flags given on the command
 * line come later and win.  Every target gets a per-input timeout
 * (libFuzzer's own is 20 minutes: a hang would stall `make test`); each
 * adds its own (-max_len, a dictionary).  A "-dict=PATH" default is left
 * out when PATH is not readable (run from elsewhere than the tree's root). */
static int fuzz_init(int *argc, char ***argv, const char *const *defaults)
{
	static char *args[256];
	static char timeout[] = "-timeout=10";
	int n = 0;
	if (*argc < 1 || *argc > 200)
		return 0;
	args[n++] = (*argv)[0];
	args[n++] = timeout;
	for (int i = 0; defaults && defaults[i] && n < 40; i++) {
		const char *d = defaults[i];
		if (strncmp(d, "-dict=", 6) == 0 && access(d + 6, R_OK) != 0)
			continue;
		args[n++] = (char *)d;
	}
	for (int i = 1; i < *argc; i++)
		args[n++] = (*argv)[i];
	args[n] = NULL;
	*argc = n;
	*argv = args;
	return 0;
}

/* The input as a file, for readers that take a path: one memfd per
 * process (an unlinked /tmp file without memfd), rewritten per input and
 * named /proc/self/fd/N, so nothing is left behind when the process dies
 * on a crash and nothing touches a disk. */
struct fuzz_file {
	int fd;
	char path[64];
};

static void fuzz_file_open(struct fuzz_file *f, const char *name)
{
	if (f->path[0])
		return;
	f->fd = memfd_create(name, MFD_CLOEXEC);
	if (f->fd < 0) {
		char tmp[] = "/tmp/heapfs-fuzz-XXXXXX";
		f->fd = mkostemp(tmp, O_CLOEXEC);
		if (f->fd < 0) {
			perror("fuzz: scratch file");
			abort();
		}
		unlink(tmp);
	}
	snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
}

static void fuzz_file_write(struct fuzz_file *f, const uint8_t *data, size_t size)
{
	size_t done = 0;
	if (ftruncate(f->fd, 0) != 0)
		goto fail;
	while (done < size) {
		ssize_t k = pwrite(f->fd, data + done, size - done, (off_t)done);
		if (k < 0)
			goto fail;
		done += (size_t)k;
	}
	return;
fail:
	perror("fuzz: write scratch file");
	abort();
}

/* A directory for files a reader creates itself (the importer's output
 * trace, which it writes beside the path and renames, and fsyncs): tmpfs
 * when there is one, where fsync costs nothing (on /tmp it took a third of
 * fuzz_hprof's time).  Also made TMPDIR, where a dump opened directly gets
 * its temporary trace. */
static const char *fuzz_scratch_dir(void)
{
	static const char *dir;
	if (!dir) {
		struct stat st;
		dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
		      ? "/dev/shm" : "/tmp";
		setenv("TMPDIR", dir, 1);
	}
	return dir;
}

#endif
