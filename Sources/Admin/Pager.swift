import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Long output through a pager on a terminal, as git does: `$PAGER` (`less` when unset, with
/// `LESS=FRX` unless set, so that one screenful prints and leaves no trace), never in a pipe
/// or a file, never with `--no-pager`, and not when `PAGER` is empty or `cat`.
enum Pager {
    // Unchecked: set and read only on the main thread, by the command's start (`startIfWanted`)
    // and its end (`finish`), never while another thread runs.
    nonisolated(unsafe) private static var pager: pid_t?

    static func startIfWanted(disabled: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard !disabled, pager == nil, isatty(STDOUT_FILENO) == 1, environment["TERM"] != "dumb" else { return }
        let command = environment["PAGER"] ?? "less"
        guard !command.trimmingCharacters(in: .whitespaces).isEmpty, command != "cat" else { return }
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, descriptors[0], STDIN_FILENO)
        posix_spawn_file_actions_addclose(&actions, descriptors[0])
        posix_spawn_file_actions_addclose(&actions, descriptors[1])
        var variables = environment
        if variables["LESS"] == nil { variables["LESS"] = "FRX" }
        let arguments = ["/bin/sh", "-c", command]
        var child: pid_t = 0
        let spawned = withCStrings(arguments) { argv in
            withCStrings(variables.map { "\($0.key)=\($0.value)" }) { envp in
                posix_spawn(&child, "/bin/sh", &actions, nil, argv, envp)
            }
        }
        close(descriptors[0])
        guard spawned == 0 else {
            close(descriptors[1])
            return
        }
        fflush(nil)
        dup2(descriptors[1], STDOUT_FILENO)
        close(descriptors[1])
        pager = child
    }

    /// Hands the pager the end of the output and waits until the reader quits it.
    static func finish() {
        guard let child = pager else { return }
        pager = nil
        fflush(nil)
        close(STDOUT_FILENO)
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1 && errno == EINTR {}
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
