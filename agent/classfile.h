/* classfile.h - a Java class-file reader and writer (JVMS 17, chapter 4).
 *
 * Parsed: the constant pool (entries indexed; raw bytes kept), fields and
 * methods with their attributes; a method's Code attribute with its
 * exception table, StackMapTable (frames decoded to complete states and
 * their original encoding kept), LineNumberTable, LocalVariableTable and
 * LocalVariableTypeTable.  Every other attribute is passed through as raw
 * bytes.  cf_write of an unmodified class gives the input bytes exactly.
 *
 * Instructions: cf_insn_len decodes one instruction's length (wide,
 * tableswitch/lookupswitch padding included); cf_code_decode lists a Code
 * array's instructions with their branch targets.
 *
 * Ownership: struct cf_class owns everything it points to through its arena
 * (cf_free releases it at once); the input bytes must outlive the class
 * (raw attributes and pool bytes point into them until replaced).
 */
#ifndef HEAPFS_AGENT_CLASSFILE_H
#define HEAPFS_AGENT_CLASSFILE_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

/* constant pool tags */
enum {
	CP_UTF8 = 1, CP_INTEGER = 3, CP_FLOAT = 4, CP_LONG = 5, CP_DOUBLE = 6, CP_CLASS = 7,
	CP_STRING = 8, CP_FIELDREF = 9, CP_METHODREF = 10, CP_IMETHODREF = 11,
	CP_NAMETYPE = 12, CP_METHODHANDLE = 15, CP_METHODTYPE = 16, CP_DYNAMIC = 17,
	CP_INVOKEDYNAMIC = 18, CP_MODULE = 19, CP_PACKAGE = 20,
};

/* verification type tags (StackMapTable) */
enum {
	VT_TOP = 0, VT_INTEGER, VT_FLOAT, VT_DOUBLE, VT_LONG, VT_NULL, VT_UNINIT_THIS,
	VT_OBJECT, VT_UNINIT,
};

struct cf_vtype {
	uint8_t tag;
	uint16_t val;       /* VT_OBJECT: class index; VT_UNINIT: bytecode offset of its `new` */
};

/* The local slots a verification type takes: 2 for a long or double. */
static inline uint32_t cf_vtype_slots(const struct cf_vtype *t)
{
	return t->tag == VT_LONG || t->tag == VT_DOUBLE ? 2 : 1;
}

/* One StackMapTable frame as encoded: type is the frame_type byte, bci the
 * absolute offset; locals/stack hold the entries the encoding lists (full:
 * all; append: the new locals; same_locals_1_stack_item: the stack item).
 * cf_frames_expand turns them into complete states (type 255). */
struct cf_frame {
	uint8_t type;
	uint32_t bci;
	uint16_t nlocals, nstack;    /* entries (a long/double is one entry) */
	struct cf_vtype *locals, *stack;
};

struct cf_exc {
	uint16_t start, end, handler, catch_type;
};

/* LineNumberTable (a, b = start_pc, line) and LocalVariable(Type)Table
 * entries (start_pc, length, name, descriptor/signature, index). */
struct cf_line { uint16_t start, line; };
struct cf_local { uint16_t start, len, name, desc, index; };

struct cf_attr {
	uint16_t name;      /* pool index of the name */
	uint32_t len;
	const uint8_t *data;
};

enum cf_code_attr_kind { CA_RAW = 0, CA_SMT, CA_LNT, CA_LVT, CA_LVTT };

/* Code attribute's own attribute, in file order. */
struct cf_code_attr {
	enum cf_code_attr_kind kind;
	struct cf_attr raw;        /* name always; data/len for CA_RAW */
	union {
		struct { struct cf_frame *f; uint32_t n; } smt;
		struct { struct cf_line *e; uint32_t n; } lnt;
		struct { struct cf_local *e; uint32_t n; } lvt;   /* LVT and LVTT */
	} u;
};

struct cf_code {
	uint16_t max_stack, max_locals;
	uint32_t len;
	const uint8_t *code;
	struct cf_exc *exc; uint32_t nexc;
	struct cf_code_attr *attrs; uint32_t nattrs;
};

struct cf_member {        /* a field or a method */
	uint16_t access, name, desc;
	struct cf_attr *attrs; uint32_t nattrs;
	int code_attr;            /* index of Code in attrs, -1 none */
	struct cf_code *code;     /* parsed Code (methods) or NULL */
};

struct cf_arena;

struct cf_class {
	uint16_t minor, major;
	uint16_t cp_count;        /* as in the file: entries 1..cp_count-1 */
	uint8_t *cp_tag;          /* [cp_count]; 0 for unusable slots (0, after long/double) */
	const uint8_t **cp_ptr;   /* [cp_count] start of the entry after its tag */
	uint32_t cp_cap;
	/* Finding entries (cf_cp_*): an open-addressing table of pool
	 * indexes (0 empty) by tag and body, built at the first lookup and
	 * kept up to date by appends; without it, adding each counter's
	 * Integer scanned the whole pool. */
	uint16_t *cp_hash;
	uint32_t cp_hash_cap, cp_hash_n;
	uint16_t access, this_class, super_class;
	uint16_t ninterfaces; uint16_t *interfaces;
	uint16_t nfields, nmethods;
	struct cf_member *fields, *methods;
	struct cf_attr *attrs; uint32_t nattrs;
	struct cf_arena *arena;
};

/* Parses data[0..n).  Returns 0 and *out (caller frees with cf_free), or
 * -EINVAL for a malformed class, -ENOMEM. */
int cf_parse(const uint8_t *data, size_t n, struct cf_class **out);
void cf_free(struct cf_class *c);

/* Appends the class file to out.  0 or -ENOMEM / -E2BIG (a table overflows). */
int cf_write(const struct cf_class *c, struct buf *out);

/* Memory from the class's arena (zeroed); NULL on ENOMEM. */
void *cf_alloc(struct cf_class *c, size_t n);
/* A copy of a Code attribute in the class's arena whose tables (exception
 * table, attribute list, frames, lines, local variables) can be changed
 * without touching k's; frames' type arrays are shared (read only).
 * NULL on ENOMEM. */
struct cf_code *cf_code_copy(struct cf_class *c, const struct cf_code *k);

/* ---- constant pool ---- */
/* The UTF-8 entry idx as (pointer, length), or NULL if idx is not Utf8. */
const char *cf_utf8(const struct cf_class *c, uint16_t idx, uint16_t *len);
/* Compares Utf8 entry idx with a NUL-terminated string. */
int cf_utf8_eq(const struct cf_class *c, uint16_t idx, const char *s);
/* Name (Utf8 index) of Class entry idx, 0 if not a class. */
uint16_t cf_class_name(const struct cf_class *c, uint16_t idx);
/* Name (Utf8 index) of the Fieldref, Methodref or InterfaceMethodref idx,
 * 0 if idx is none of them. */
uint16_t cf_ref_name(const struct cf_class *c, uint16_t idx);
/* Class name, name and descriptor (Utf8 indexes) of the Fieldref,
 * Methodref or InterfaceMethodref idx.  0, or -EINVAL if idx is none. */
int cf_ref_parts(const struct cf_class *c, uint16_t idx, uint16_t *cls, uint16_t *name, uint16_t *desc);
/* Find-or-add entries; return the index, 0 when the pool is full / ENOMEM. */
uint16_t cf_cp_utf8(struct cf_class *c, const char *s, size_t len);
uint16_t cf_cp_class(struct cf_class *c, const char *name, size_t len);
uint16_t cf_cp_integer(struct cf_class *c, int32_t v);
uint16_t cf_cp_long(struct cf_class *c, int64_t v);
uint16_t cf_cp_fieldref(struct cf_class *c, const char *owner, const char *name, const char *desc);
/* A Methodref of a class (not an interface). */
uint16_t cf_cp_methodref(struct cf_class *c, const char *owner, const char *name, const char *desc);

/* ---- instructions ---- */
/* Length of the instruction at code[pc] (code_len bytes in all), or -1 if it
 * is invalid or runs past the end. */
int cf_insn_len(const uint8_t *code, uint32_t code_len, uint32_t pc);

enum cf_insn_kind {
	IK_PLAIN = 0,   /* falls through */
	IK_COND,        /* conditional branch: target + fall through */
	IK_GOTO,        /* goto, goto_w */
	IK_SWITCH,      /* tableswitch, lookupswitch */
	IK_RETURN,      /* *return */
	IK_THROW,       /* athrow */
	IK_JSR,         /* jsr, jsr_w, ret: not supported by the instrumenter */
};

struct cf_insn {
	uint32_t pc;
	uint16_t len;
	uint8_t op;
	uint8_t kind;            /* enum cf_insn_kind */
	uint8_t site;            /* an allocation site (cf_code_decode): an allocating
				  * opcode, or an invokestatic of an allocating
				  * intrinsic (cf_call_allocates) */
	uint32_t ntargets;       /* branch targets (switch: default first, then cases) */
	uint32_t target0;        /* first target (COND, GOTO) */
	uint32_t *targets;       /* SWITCH: [ntargets] absolute targets, arena memory */
};

/* The enum cf_insn_kind of opcode op. */
uint8_t cf_op_kind(uint8_t op);

/* Decodes a Code array.  *out: [*n] instructions in the class's arena.
 * Branch targets are checked to be instruction starts.  0 or -EINVAL/-ENOMEM. */
int cf_code_decode(struct cf_class *c, const struct cf_code *code, struct cf_insn **out, uint32_t *n);

/* Whether op allocates an object: new, newarray, anewarray, multianewarray. */
int cf_op_allocates(uint8_t op);

/* Whether the method owner.name desc (internal names) is one HotSpot's
 * JIT compilers replace, where a compiled caller calls it, by an
 * allocation of their own (an intrinsic), so that its bytecode, and a
 * counter in it, does not run for that call: java.util.Arrays.copyOf and
 * copyOfRange of Object arrays with a Class argument (the JDK's
 * vmIntrinsics _copyOf and _copyOfRange), which ArrayList's growth and
 * Arrays.copyOf(T[], int) call. */
int cf_method_allocates(const char *owner, size_t ol, const char *name, size_t nl, const char *desc, size_t dl);
/* Whether invokestatic of pool entry idx calls such a method. */
int cf_call_allocates(const struct cf_class *c, uint16_t idx);
/* Whether the instruction of len bytes at code[pc] is an allocation site:
 * an allocating opcode (cf_op_allocates) or an invokestatic of an
 * allocating intrinsic (cf_call_allocates). */
int cf_insn_allocates(const struct cf_class *c, const uint8_t *code, uint32_t pc, int len);

/* Number of local entries of the implicit initial frame of a method, and its
 * types (locals[] has room for 256 + entries).  this_class names `this`; an
 * <init> gets UninitializedThis.  Reference types of parameters are added
 * to the pool as Class entries.  Returns the count, or -ENOMEM/-EINVAL. */
int cf_initial_frame(struct cf_class *c, const struct cf_member *m, struct cf_vtype *locals, int cap);

/* Complete states (full frames, type 255) of a method's encoded frames, in
 * the class's arena.  0 or -EINVAL/-ENOMEM. */
int cf_frames_expand(struct cf_class *c, const struct cf_member *m, const struct cf_frame *in, uint32_t n,
		     struct cf_frame **out);

/* The frame at bytecode offset bci among f[0..n), or NULL. */
const struct cf_frame *cf_frame_at(const struct cf_frame *f, uint32_t n, uint32_t bci);

/* Line of bytecode offset pc from the Code's LineNumberTable, 0 if none. */
uint32_t cf_line_of(const struct cf_code *code, uint32_t pc);

#endif
