import StationSupport

/// "Did you mean …?" for a mistyped subcommand, as git does.
enum CommandSuggestion {
    struct Typo: Equatable {
        let given: String
        let nearest: String
    }

    /// The first argument (or the one after `help`) when it is no command and no option but
    /// close to a command.
    static func misspelledCommand(in arguments: [String], commands: [String]) -> Typo? {
        let asked = arguments.first == "help" ? Array(arguments.dropFirst()) : arguments
        guard let first = asked.first, !first.hasPrefix("-"), !commands.contains(first), first != "help" else { return nil }
        guard let nearest = NearestName.nearest(to: first, among: commands) else { return nil }
        return Typo(given: first, nearest: nearest)
    }

    /// `station-admin --db m.sqlite status` as `station-admin status --db m.sqlite`: curators type
    /// the master first, as git takes `-C dir` before its command; each subcommand declares `--db`.
    static func globalOptionsMovedAfterTheCommand(_ arguments: [String]) -> [String] {
        var leading: [String] = [], rest = arguments[...]
        while let first = rest.first {
            if first == "--db", rest.count >= 2 {
                leading += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if first.hasPrefix("--db=") {
                leading.append(first)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard !leading.isEmpty, let command = rest.first, !command.hasPrefix("-") else { return arguments }
        return [command] + leading + rest.dropFirst()
    }
}
