import Synchronization

/// A command a message tells the curator to run next: the subcommand and its arguments, as
/// values. The library names what to run; the program that shows the message spells it (its
/// own name, then the words), so that no command line's words are written inside the library.
///
/// In a message it reads as `\(CommandHint("edit", "stations", "1130101", "lat=…"))`; `Admin`
/// calls `spellHints` once at start, and without it the words stand alone
/// (`edit stations 1130101 lat=…`).
public struct CommandHint: Sendable, Equatable, CustomStringConvertible {
    /// The subcommand: `edit`, `release`, `waive`.
    public let command: String
    /// Its arguments and options in order, unquoted; `…` and capitals (`KEY`) stand for what
    /// the curator fills in.
    public let arguments: [String]

    /// A hint of `command` with `arguments`.
    public init(_ command: String, _ arguments: String...) {
        self.init(command, arguments: arguments)
    }

    /// A hint of `command` with `arguments` given as an array.
    public init(_ command: String, arguments: [String]) {
        self.command = command
        self.arguments = arguments
    }

    /// The hint as the installed spelling puts it.
    public var description: String { Self.spelling.withLock { $0 }(self) }

    /// The command and arguments as a POSIX shell reads them back: a word with a space, a quote
    /// or another character the shell would act on is single-quoted (a path such as
    /// `/srv/my releases` stays one argument when pasted).
    public var shellWords: [String] {
        ([command] + arguments).map { word in
            guard word.isEmpty || word.unicodeScalars.contains(where: Self.shellSpecial.contains) else { return word }
            return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
        }
    }

    /// Sets how every hint is spelled from now on: the command-line tool puts its name first.
    public static func spellHints(_ spell: @escaping @Sendable (CommandHint) -> String) {
        spelling.withLock { $0 = spell }
    }

    private static let spelling = Mutex<@Sendable (CommandHint) -> String>({ $0.shellWords.joined(separator: " ") })
    private static let shellSpecial = Set(" \t\n'\"\\$`!*?[](){};&|<>#~".unicodeScalars)
}
