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

    /// `station-admin --db m.sqlite --no-pager status` as `station-admin status --db m.sqlite
    /// --no-pager`: curators type the master first, as git takes `-C dir` before its command;
    /// every subcommand that reads the master declares `GlobalOptions`, in any number and order
    /// before the command.
    static func globalOptionsMovedAfterTheCommand(_ arguments: [String]) -> [String] {
        var leading: [String] = [], rest = arguments[...]
        while let first = rest.first {
            if GlobalOptions.valuedNames.contains(first), rest.count >= 2 {
                leading += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if GlobalOptions.flagNames.contains(first) || GlobalOptions.valuedNames.contains(where: { first.hasPrefix($0 + "=") }) {
                leading.append(first)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard !leading.isEmpty, let command = rest.first, !command.hasPrefix("-") else { return arguments }
        return [command] + leading + rest.dropFirst()
    }

    /// `log --version -3`: ArgumentParser reads `-3` as an option and answers "Missing value";
    /// every number an option of this tool takes (a version, a count, a limit, a port, a seed
    /// or distance) is 0 or more, so such an argument gets a sentence saying so.
    static let noNegative = "takes no negative number (versions, counts, limits, ports and distances are 0 or more)."

    static func negativeNumber(in arguments: [String]) -> String? {
        func isNegative(_ text: Substring) -> Bool { text.count > 1 && text.first == "-" && Double(text.dropFirst()) != nil }
        for (index, argument) in arguments.enumerated() where argument.hasPrefix("-") {
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "="), isNegative(argument[argument.index(after: equals)...]) {
                return "\(argument): \(argument[..<equals]) \(Self.noNegative)"
            }
            if argument.hasPrefix("--"), !argument.contains("="), index + 1 < arguments.count, isNegative(arguments[index + 1][...]) {
                return "\(argument) \(arguments[index + 1]): \(argument) \(Self.noNegative)"
            }
        }
        return nil
    }
}
