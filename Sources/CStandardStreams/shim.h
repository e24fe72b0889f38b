// The C library's standard output stream, which Swift 6 cannot name (`stdout` is a mutable
// global): whether everything `print` wrote reached it.
#include <errno.h>
#include <stdio.h>

/// Flushes stdout; 0 when every write to it succeeded, else the errno of the failure.
static inline int station_admin_finish_stdout(void) {
    if (fflush(stdout) == 0 && ferror(stdout) == 0) return 0;
    return errno != 0 ? errno : EIO;
}
