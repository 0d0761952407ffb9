/* cpu=samples: the native function a Java thread was running when its signal came, as a
 * pseudo-frame put on top of its Java stack by the drain: "[libz.so.1].deflate_slow" (class =
 * the library, method = the function, "<unknown>" when the library's symbol tables do not
 * name it). The signal handler only stores the interrupted pc in the record; everything here
 * runs in the drain (one thread at a time), never on the signal path. A pc in Java code (the
 * code cache) or in libjvm (the VM's runtime calls, whose samples go to the Java method that
 * called it, as before) gets no frame. doc/cpu-samples.md, "Native code". */
#ifndef HPROF_NATIVE_FRAMES_H
#define HPROF_NATIVE_FRAMES_H

#include <jvmti.h>
#include <stdint.h>

/* The pseudo-method for pc, or NULL: no frame to add. */
jmethodID native_frames_method(uintptr_t pc);

#endif
