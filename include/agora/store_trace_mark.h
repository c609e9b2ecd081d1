/* Included (by agoracc -agora-trace-stores and agora_add_traced_executable,
 * with -include) in every translation unit of a program built with store
 * tracing: its constructor tells Agora, before main, that the program's
 * stores are traced (docs/store-tracing.md). One copy per translation unit
 * is harmless: each only sets the same flag. */
#ifndef AGORA_STORE_TRACE_MARK_H
#define AGORA_STORE_TRACE_MARK_H
#ifdef __cplusplus
extern "C" {
#endif
void agora_store_trace_mark_instrumented(void);
#ifdef __cplusplus
}
#endif
__attribute__((constructor, used)) static void agora_store_trace_mark_(void) { agora_store_trace_mark_instrumented(); }
#endif
