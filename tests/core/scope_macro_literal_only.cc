// Compiled by ctest (syntax only, never linked): NEURONPROF_SCOPE must
// accept a string literal and refuse to compile anything else, because it
// stores its name by pointer. NEURONPROF_NON_LITERAL picks the refused case;
// without it the file must compile (the check that the test is meaningful).
#include <cstdio>

#include "neuronprof/trace.h"

void Marker(const char* dynamic_name, int layer) {
#if NEURONPROF_NON_LITERAL == 1
  NEURONPROF_SCOPE(dynamic_name);
#elif NEURONPROF_NON_LITERAL == 2
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "layer_%d", layer);
  NEURONPROF_SCOPE(buffer);
#else
  NEURONPROF_SCOPE("literal");
  NEURONPROF_SCOPE("literal_with_args", {{"layer", layer}});
  (void)dynamic_name;
#endif
}
