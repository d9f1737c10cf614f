/* profile.h - measured edge frequencies kept from one run of a program to
 * the next (mode=count, `profile=FILE`).
 *
 * Why: hot=N plans a method's paths from the frequencies its counters
 * measured, but only by retransforming its class, which costs the JVM
 * 10-60 ms for a large class (the new version parsed and verified again;
 * agent/README.md, "mode=count" 6).  A program run again (a build tool, a
 * batch job, a service restarted) takes the same paths: frequencies
 * measured in one run plan the next run's counters when its classes are
 * loaded, with no retransformation at all.
 *
 * The file is text, one method a line, sorted, so that it can be read,
 * compared and cut with the usual tools:
 *
 *   # heapfs-agent profile 1
 *   CLASS <TAB> METHOD <TAB> DESCRIPTOR <TAB> HASH <TAB> BLOCKS <TAB> EDGES <TAB> PLAN <TAB> FREQS
 *
 * CLASS in the JVM's internal form (java/lang/String), HASH the method's
 * code hash (instr_code_hash: 16 hex digits; a method whose code changed
 * is planned afresh), BLOCKS and EDGES the CFG's blocks and normal edges
 * (cfg.h), PLAN `paths` or `sites`.  For `paths`, FREQS is EDGES + 2 x
 * BLOCKS comma-separated counts in instrument.h's layout (sink->freq:
 * the normal edges, then X -> block, then block -> X); for `sites` (path
 * counters executed more increments than they counted: one counter per
 * site), `-`.  Lines starting with '#' and empty lines are comments.
 *
 * Version 2 adds clone links (inline=on), one method a line:
 *
 *   CLASS <TAB> METHOD <TAB> DESCRIPTOR <TAB> clone
 *
 * Callers of the method were loaded before its class in a run, so they
 * could not call its clone until hot=N relinked them (a retransformation
 * each).  The next run links such callers to the clone at once: the
 * clone's class gets the clone however its bytes changed (instrument.h,
 * sink->linked).  A version 1 file has no such lines and still reads.
 *
 * Ownership: struct profile owns its entries and their arrays;
 * profile_free releases them.
 */
#ifndef HEAPFS_AGENT_PROFILE_H
#define HEAPFS_AGENT_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#define PROFILE_HEADER "# heapfs-agent profile 2"
#define PROFILE_HEADER_V1 "# heapfs-agent profile 1"
#define PROFILE_MAX_BLOCKS 65536u      /* code is at most 64 KiB */
#define PROFILE_MAX_EDGES (1u << 22)

struct profile_entry {
	char *key;                 /* owned: class \0 method \0 descriptor */
	size_t keylen;
	uint64_t hash;
	uint32_t nblocks, nnormal;
	int sites;                 /* 1: one counter per site; freq NULL */
	double *freq;              /* owned, [nnormal + 2 * nblocks] */
	UT_hash_handle hh;
};

/* A clone link (version 2). */
struct profile_link {
	char *key;                 /* owned: class \0 method \0 descriptor */
	size_t keylen;
	UT_hash_handle hh;
};

struct profile {
	struct profile_entry *by_key;
	uint32_t n;
	uint32_t changed;          /* entries and links put or dropped since loading */
	struct profile_link *links;
	uint32_t nlinks;
};

/* The lookup key of a method, "class \0 method \0 descriptor" from
 * slices of the given lengths (not NUL-terminated), NUL-terminated;
 * *keylen leaves out the last NUL.  The caller owns it; NULL: out of
 * memory. */
char *profile_key(const char *cls, size_t cl, const char *name, size_t nl, const char *desc, size_t dl,
		  size_t *keylen);

/* Parses the text of a profile file into p (empty before).  0, or
 * -EINVAL with "line N: why" in err (p then holds the lines before), or
 * -ENOMEM. */
int profile_parse(struct profile *p, const char *text, size_t len, char *err, size_t errlen);

/* Reads and parses the file.  -ENOENT: there is none (p stays empty: a
 * first run); other errors as profile_parse's, or the file's errno, with
 * err saying so. */
int profile_load(struct profile *p, const char *path, char *err, size_t errlen);

/* The plan the profile has for a method whose code hashes to hash and
 * whose CFG has nblocks blocks and nnormal normal edges: its frequencies,
 * or NULL with *sites = 1 (one counter per site), or NULL with *sites
 * untouched (not in the profile, or its code changed). */
const double *profile_plan(const struct profile *p, const char *key, size_t keylen, uint64_t hash,
			   uint32_t nblocks, uint32_t nnormal, int *sites);

/* Sets a method's plan (replacing what the profile had): freq
 * (nnormal + 2 * nblocks values, copied) or, freq NULL, one counter per
 * site.  0, -EINVAL (a key the file format cannot hold: a TAB or a line
 * break in a name; nothing put), -ENOMEM. */
int profile_put(struct profile *p, const char *key, size_t keylen, uint64_t hash, uint32_t nblocks,
		uint32_t nnormal, const double *freq);

/* Whether callers may be linked to the method's clone (a link line). */
int profile_linked(const struct profile *p, const char *key, size_t keylen);

/* Adds a clone link (1 added, 0 it was there), or drops one (drop != 0:
 * 1 dropped, 0 there was none).  -EINVAL for a key the format cannot
 * hold, -ENOMEM. */
int profile_link(struct profile *p, const char *key, size_t keylen, int drop);

/* Writes the profile to path (through path.tmp, renamed: a reader never
 * sees half a file), lines sorted by key.  0 or -errno. */
int profile_save(const struct profile *p, const char *path);

void profile_free(struct profile *p);

#endif
