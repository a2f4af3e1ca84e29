// ThreadSanitizer suppressions for the nn op tests, linked into them in
// ThreadSanitizer builds only. Debian's libdnnl and libgomp are not
// instrumented: TSan cannot see the synchronization inside them (oneDNN's
// primitive cache lock, created under its own call_once; the barrier that
// ends an OpenMP region) and reports the libraries' own state as racing.
// A race whose stacks have no frame in those libraries still fails.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libdnnl.so\n"
         "race:libgomp.so\n";
}
