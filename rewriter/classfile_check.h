/* A structural check of a class file, independent of the rewriting code paths that produced it:
 * every constant-pool reference points at an entry of the right kind, every instruction is valid
 * and its operands name constants of the right kind, every branch, switch, exception-table,
 * line-number, local-variable and stack-map offset lands on an instruction boundary, and every
 * length adds up. It does not type-check (the JVM's verifier does that; see java-tests/rewriter).
 * Used by the tests on everything the rewriter writes; cheap enough for an agent's debug mode.
 * Pure C11. */
#ifndef HPROF_CLASSFILE_CHECK_H
#define HPROF_CLASSFILE_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0 if the class file is well formed, -1 with a one-line reason in err. */
int classfile_check(const uint8_t *bytes, size_t len, char *err, size_t errlen);

#endif
