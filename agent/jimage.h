/* jimage.h - the original class files of the JDK's runtime image
 * ($JAVA_HOME/lib/modules), read through the JDK's own libjimage.
 *
 * Why: jdk=on instruments the java.* classes loaded before VMInit by
 * retransforming them, and the JVM hands a retransformation the class as
 * it rebuilds it from memory.  A boot class the JVM did not verify (every
 * one it loads from the image rather than the CDS archive: -Xshare:off,
 * a JVM whose flags make the default archive unusable, a class not in the
 * archive) keeps no StackMapTable, so the rebuilt bytes have none, and the
 * instrumenter cannot place a counter in any method with a branch
 * (measured on OpenJDK 17: 22 classes failed and 151 methods left alone,
 * Long.valueOf among them).  The file in the image is the class as the
 * JVM defined it, stack maps included.
 *
 * libjimage.so is the JDK's library (lib/) that the JVM itself loads to
 * read the image; its C entry points (JIMAGE_Open, JIMAGE_PackageToModule,
 * JIMAGE_FindResource, JIMAGE_GetResource, JIMAGE_Close) are exported and
 * used here through dlopen, so that nothing is linked against a JDK.
 * Inside a JVM its dependency (libjvm.so) is already loaded.
 */
#ifndef HEAPFS_AGENT_JIMAGE_H
#define HEAPFS_AGENT_JIMAGE_H

#include <stddef.h>
#include <stdint.h>

struct jimage;

/* Opens java_home's lib/modules: 0 and *out (jimage_close), -ENOENT
 * (no image or no libjimage: a JDK 8 layout), -EIO, -ENOMEM. */
int jimage_open(const char *java_home, struct jimage **out);

/* The class file of internal name (java/lang/Long) from its module:
 * 0 and *data (caller frees), *len; -ENOENT when the image has no such
 * class, -EIO, -ENOMEM. */
int jimage_read_class(struct jimage *j, const char *name, uint8_t **data, size_t *len);

void jimage_close(struct jimage *j);

#endif
