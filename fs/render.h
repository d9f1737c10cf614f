/* render.h - the renderers behind render_node (fs/tree_internal.h).
 * Each appends one file's whole content to out and returns 0 or negative
 * errno. */
#ifndef HEAPFS_FS_RENDER_H
#define HEAPFS_FS_RENDER_H

#include "model/buf.h"

struct hfs;
struct node;

/* A node kind's renderer (fs/tree.c's nt_defs): arg says which of the
 * files it renders this is (an enum of the renderer's, below). */
typedef int (*render_fn)(struct hfs *fs, const struct node *n, int arg, struct buf *out);

/* render_gc.c: a GC's info, group files, classification tables, the
 * classifier files */
struct trace;
enum group_file { GF_COUNT, GF_SHALLOW, GF_SUMMARY, GF_BORN_C, GF_BORN_B, GF_DIED_C, GF_DIED_B,
		  GF_PERM_C, GF_PERM_B, GF_NET_C, GF_NET_B, GF_SAMPLES,
		  GF_XCOUNT, GF_XSHALLOW /* sampled traces at a GC with a graph: its objects, exact */ };
enum table_fmt { TF_TSV, TF_CSV, TF_JSON };
int render_gc_info(struct hfs *fs, const struct node *n, int arg, struct buf *out);
int render_group_metric(struct hfs *fs, const struct node *n, int arg, struct buf *out);
/* Sampled traces: the "estimate<TAB>..." line saying how estimates were
 * made and from how many samples. */
int render_sample_note(const struct trace *t, uint64_t samples, struct buf *out);
int render_group_objects(struct hfs *fs, const struct node *n, int arg, struct buf *out);
int render_table(struct hfs *fs, const struct node *n, int arg, struct buf *out);
int render_classifier_def(struct hfs *fs, const struct node *n, int arg, struct buf *out);
int render_classifiers_list(struct hfs *fs, const struct node *n, int arg, struct buf *out);
/* render_classify.c: classifiers/README */
int render_classifiers_readme(struct hfs *fs, struct buf *out);

/* render_trace.c: no heap state needed */
int render_readme(struct hfs *fs, struct buf *out);
int render_status(struct hfs *fs, struct buf *out);
int render_trace_info(struct hfs *fs, struct buf *out);
struct trace;
/* trace/info's content, which `heapfs check` prints too. */
int render_trace_summary(const struct trace *t, struct buf *out);
int render_gcs_csv(struct hfs *fs, struct buf *out);

/* render_object.c: objects/<id>/ and roots/ (need the heap state) */
int render_object_info(struct hfs *fs, const struct node *n, struct buf *out);
int render_object_refs(struct hfs *fs, const struct node *n, struct buf *out);
int render_object_referrers(struct hfs *fs, const struct node *n, struct buf *out);
int render_roots_table(struct hfs *fs, const struct node *n, struct buf *out);

#endif
