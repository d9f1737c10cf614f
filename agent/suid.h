/* suid.h - the default serialVersionUID of a class, as Java serialization
 * computes it for a Serializable class that declares none (Java Object
 * Serialization Specification, 4.6; JDK 17 ObjectStreamClass.
 * computeDefaultSUID): the first 8 bytes, little-endian, of the SHA-1 of
 * the class's name, modifiers, interfaces, fields, static initializer,
 * constructors and methods.
 *
 * Why: counter inlining (instrument.h) adds synthetic methods to a class,
 * which would change that value and make a stream written without the
 * agent unreadable with it (InvalidClassException); the instrumenter
 * writes the original value into an explicit serialVersionUID field.
 *
 * Pure C, no allocation beyond the scratch buffer it frees.
 */
#ifndef HEAPFS_AGENT_SUID_H
#define HEAPFS_AGENT_SUID_H

#include <stdint.h>

#include "agent/classfile.h"

/* 0 and *out, -ENOTSUP when the value cannot be computed from the class
 * file alone as Java does (a name or descriptor beyond ASCII, whose order
 * Java takes in UTF-16), -EINVAL (malformed), -ENOMEM. */
int suid_default(const struct cf_class *c, int64_t *out);

/* SHA-1 of data[0..n) into md[20] (FIPS 180-4). */
void suid_sha1(const uint8_t *data, size_t n, uint8_t md[20]);

#endif
