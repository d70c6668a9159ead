// The C entry points of libnova_tracer.so: InitializeInjection for CUDA_INJECTION64_PATH, and the
// functions the Python worker calls through ctypes (node markers, start/stop, flush).
#include <cstdint>
#include <cstdlib>

#include "core/trace/injection/cupti_tracer.h"

#define NOVA_EXPORT extern "C" __attribute__((visibility("default")))

using nova::tracer::CuptiTracer;

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names this library.
NOVA_EXPORT int InitializeInjection(void) {
  CuptiTracer& t = CuptiTracer::instance();
  if (!t.initialize()) return 0;
  const char* autostart = std::getenv("NOVA_TRACE_AUTOSTART");
  if (!autostart || autostart[0] != '0') t.start();
  return 1;
}

// In-process use (no injection): same set-up, without starting.
NOVA_EXPORT int nova_tracer_init(void) { return CuptiTracer::instance().initialize() ? 1 : 0; }
// 1 when CUPTI is set up in this process (the worker checks the injection really happened).
NOVA_EXPORT int nova_tracer_active(void) { return CuptiTracer::instance().initialized() ? 1 : 0; }
NOVA_EXPORT void nova_tracer_start(void) { CuptiTracer::instance().start(); }
NOVA_EXPORT void nova_tracer_stop(void) { CuptiTracer::instance().stop(); }
NOVA_EXPORT void nova_tracer_flush(void) { CuptiTracer::instance().flush(); }
NOVA_EXPORT void nova_tracer_finish(void) { CuptiTracer::instance().finish(); }
NOVA_EXPORT void nova_tracer_push_node(std::uint64_t node_id) { CuptiTracer::instance().push_node(node_id); }
NOVA_EXPORT void nova_tracer_pop_node(void) { CuptiTracer::instance().pop_node(); }
NOVA_EXPORT void nova_tracer_iteration(std::uint64_t index) { CuptiTracer::instance().iteration(index); }
NOVA_EXPORT std::uint64_t nova_tracer_dropped(void) { return CuptiTracer::instance().dropped(); }
// Sequence attribution: calibrate(1) before one call of the instrumented model, calibrate(0) after.
NOVA_EXPORT void nova_tracer_calibrate(int on) { CuptiTracer::instance().calibrate(on != 0); }
// length, matched, resynced, unmatched of the sequence attribution so far (out[4]).
NOVA_EXPORT void nova_tracer_sequence_stats(std::uint64_t* out) {
  auto s = CuptiTracer::instance().sequence_stats();
  out[0] = s.length;
  out[1] = s.matched;
  out[2] = s.resynced;
  out[3] = s.unmatched;
}
