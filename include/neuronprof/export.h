// NEURONPROF_API marks what the neuronprof shared libraries export. They are
// built with hidden visibility, so a symbol is reachable from outside its
// library only if it carries this mark: the public API of these headers, the
// inline hot path's few out-of-line entry points (internal/recorder.h), and
// the internal entry points one neuronprof library calls in another (each
// marked where it is declared under src/, with that reason).
#ifndef NEURONPROF_EXPORT_H_
#define NEURONPROF_EXPORT_H_

#define NEURONPROF_API __attribute__((visibility("default")))

#endif  // NEURONPROF_EXPORT_H_
