/* fuzz_hprof_records.c - libFuzzer target for the low-level HPROF reader
 * (model/hprof_reader.h): the header, every record, and every sub-record
 * of every heap dump record, with the extents the decoder vouched for
 * read back.  This also reaches records the importer refuses before
 * looking at them.  Importing is fuzz_hprof_import's.
 *
 * Input: an HPROF file as it is.  Nothing may crash, hang or leak,
 * whatever the bytes; refusing damage with an error is the correct outcome
 * and is ignored.
 *
 * Seeds: small dumps written by the unit test's HPROF writer
 * (HEAPFS_HPROF_SEEDS=DIR build/tests/test_hprof): both id sizes, HEAP_DUMP
 * and segments, every root kind, several dumps, a truncated and a damaged
 * one; tests/fuzz/README.md.
 */
#include <stddef.h>
#include <stdint.h>

#include "model/hprof_reader.h"

#include "fuzz_common.h"

#define MAX_RECORDS 100000u  /* records walked per input */

static void walk_raw(const char *path)
{
	struct hprof_file *f = NULL;
	struct htr_err err;
	if (hprof_open(&f, path, &err) != 0)
		return;
	uint64_t pos = f->first_record;
	struct hprof_record r;
	for (uint32_t k = 0; k < MAX_RECORDS && hprof_next_record(f, &pos, &r) == 1; k++) {
		(void)hprof_tag_name(r.tag);
		if (r.tag != HPROF_HEAP_DUMP && r.tag != HPROF_HEAP_DUMP_SEGMENT)
			continue;
		uint64_t sp = r.body, end = r.body + r.len;
		struct hprof_sub s;
		while (hprof_next_sub(f, &sp, end, &r, &s, &err) == 1) {
			(void)hprof_sub_tag_name(s.tag);
			/* touch the extents the decoder vouched for */
			if (s.tag == HPROF_INSTANCE_DUMP && s.length)
				(void)hprof_u1(f, s.data + s.length - 1);
			if (s.tag == HPROF_OBJ_ARRAY_DUMP && s.length)
				(void)hprof_id(f, s.data + (uint64_t)(s.length - 1) * f->id_size);
			if (s.tag == HPROF_PRIM_ARRAY_DUMP && s.length)
				(void)hprof_value(f, s.data + (uint64_t)(s.length - 1) *
						  hprof_type_size(f, s.elem_type), s.elem_type);
		}
	}
	hprof_close(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, (const char *const[]){ "-max_len=4096", NULL });
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_file file;
	fuzz_file_open(&file, "heapfs-fuzz-hprof");
	fuzz_file_write(&file, data, size);
	walk_raw(file.path);
	return 0;
}
