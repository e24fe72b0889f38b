/// What each command's exit status means, as its `--help` says. One line each: the help
/// wraps it to the terminal.
enum ExitStatus {
    /// Commands that change or publish something.
    static let standard = "Exit status: 0 on success; 1 when the command failed (the message says why and what to do, and nothing was changed); 2 for a usage error."
    /// Commands that only read.
    static let readOnly = "Exit status: 0 on success; 1 when the command failed (the message says why and what to do); 2 for a usage error."
    /// `check` and `verify`: a finding is a failure too.
    static func findings(_ what: String) -> String {
        "Exit status: 0 when \(what); 1 when not, or when the command failed (the message says why); 2 for a usage error."
    }
}
