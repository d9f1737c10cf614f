/* render_classify.c - classifiers/README: the expression language of
 * user-defined classifiers, generated so the property list never drifts
 * from analyses/expr.c. */
#include <string.h>

#include "analyses/expr.h"
#include "tree_internal.h"

int render_classifiers_readme(struct hfs *fs, struct buf *out);

static const char intro[] =
	"User-defined classifiers\n"
	"========================\n"
	"\n"
	"Write an expression into a file here and a new classifier appears in every\n"
	"group, without remounting:\n"
	"\n"
	"    echo 'if size >= 1024 then \"big\" else \"small\"' > classifiers/bigness\n"
	"    ls gc/latest/by-bigness/          ->  big  small  table ...\n"
	"\n"
	"The file name is the classifier's name (lower-case letters, digits, '-',\n"
	"'_', '.').  A definition that does not compile is refused: the write fails\n"
	"with EINVAL and the message, with line and column, is appended to\n"
	"classifiers/errors (and printed on stderr when mounted with -f).  rm\n"
	"classifiers/NAME removes it.  At mount, -o classifiers=FILE loads a file of\n"
	"definitions `NAME = EXPR`, optionally separated by ';'.  classifiers/list\n"
	"shows every classifier, predefined or not.\n"
	"\n"
	"The type of the expression decides what the classifier is:\n"
	"    string or int   one-to-one:       by-NAME/VALUE/\n"
	"    list(...)       one-to-many:      the object sits under every value\n"
	"                                      (parents still count it once)\n"
	"    path(...)       one-to-hierarchy: by-NAME/A/B/C/, every level a group\n"
	"    parts(...)      the object's bytes split over several children\n"
	"    bool            a filter:         only-NAME/\n"
	"\n"
	"Syntax\n"
	"    if C then A elif C2 then B else D      (branches of one type)\n"
	"    or  and  not                           (bool)\n"
	"    ==  !=  <  <=  >  >=                   (== and != also on strings)\n"
	"    s in list    s in string (substring)   s ~ \"glob*pattern?\"\n"
	"    +  -  *  /  %                          (+ on strings concatenates)\n"
	"    \"strings\" with \\\" \\\\ \\n \\t, integers, true, false, # comments\n"
	"\n"
	"Integers\n"
	"    Signed 64-bit, from -9223372036854775808 to 9223372036854775807.  A\n"
	"    literal above 9223372036854775807 does not compile (line and column\n"
	"    in the error); write the smallest as -9223372036854775807 - 1.\n"
	"    / truncates toward zero; % has the sign of its left operand.\n"
	"    Arithmetic is checked, never wraps: when + - * / % or unary -\n"
	"    overflows (INT64_MIN / -1 and INT64_MIN % -1 included), or / or %\n"
	"    divides by zero, the object has no value.  It is classified under\n"
	"    <error> (a filter leaves it out), and classifiers/errors counts it,\n"
	"    per GC, with the first reason and where in the definition:\n"
	"        NAME: gc/003: 12 objects: line 1, column 6: integer overflow in +\n"
	"    (the count is the most objects of that GC one listing by NAME met;\n"
	"    gc/NNN/by-NAME/ itself meets them all).\n"
	"    parts(): byte counts are 0 or more (0: the part is left out).  A\n"
	"    negative count, or counts of one object adding up beyond\n"
	"    9223372036854775807, is an error the same way; an <error> object\n"
	"    puts all its bytes under <error>.  When a part's bytes over its\n"
	"    objects add up beyond 18446744073709551615, listing the\n"
	"    classification fails with EOVERFLOW, and classifiers/errors says so.\n"
	"\n"
	"Functions\n"
	"    path(a, b, ...)  list(a, b, ...)      lists are spliced in\n"
	"    str(x)  len(x)  log2(n)  split(s, sep)\n"
	"    starts_with(s, p)  ends_with(s, p)  contains(s, p)\n"
	"    any_referee(cond)  any_referrer(cond)     cond on each referenced /\n"
	"    count_referees(cond)  count_referrers(cond)   referencing object\n"
	"    parts(name1, bytes1, name2, bytes2, ...)\n"
	"\n"
	"Properties of the object\n";

static const char examples[] =
	"\n"
	"Examples\n"
	"    # one-to-one: big and small objects\n"
	"    if size >= 1024 then \"big\" else \"small\"\n"
	"    # one-to-hierarchy: package segments as levels\n"
	"    path(split(package, \".\"))\n"
	"    # one-to-many: the classes and the frames of the allocation\n"
	"    list(type, frames)\n"
	"    # filter (only-NAME/): old objects of java.util\n"
	"    age >= 3 and type ~ \"java.util.*\"\n"
	"    # collection health (predefined as by-collection-health)\n"
	"    if type_kind == \"object-array\" then \"array\"\n"
	"    elif type in referee_types then \"entry\"\n"
	"    elif any_referee(type_kind != \"instance\" or type in referee_types) then \"head\"\n"
	"    else \"contained\"\n"
	"    # instance health (predefined as by-instance-health)\n"
	"    parts(\"header\", header_bytes, \"pointer\", pointer_bytes,\n"
	"          \"null\", null_bytes, \"primitive\", primitive_bytes)\n"
	"\n"
	"Errors name the line and column:\n"
	"    bigness: line 1, column 16: expected 'then', found 'than'\n"
	"\n"
	"An object whose value would take more than 1 GiB to compute (the names\n"
	"of over 67 million referees, say) is grouped under <error> too, and\n"
	"counted in classifiers/errors the same way.\n";

int render_classifiers_readme(struct hfs *fs, struct buf *out)
{
	(void)fs;
	int rc = buf_put(out, intro, sizeof intro - 1);
	for (uint32_t p = 0; p < XP_COUNT_ && !rc; p++)
		rc = buf_printf(out, "    %-16s %-7s %s%s\n", expr_props[p].name,
				xtype_name(expr_props[p].type), expr_props[p].about,
				expr_props[p].per_object ? " (per object)" : "");
	if (!rc)
		rc = buf_put(out, examples, sizeof examples - 1);
	return rc;
}
