import StationSupport

/// "Did you mean …?" for a mistyped subcommand, as git does.
enum CommandSuggestion {
    struct Typo: Equatable {
        let given: String
        let nearest: String
    }

    /// The first argument when it is no command and no option but close to a command.
    static func misspelledCommand(in arguments: [String], commands: [String]) -> Typo? {
        guard let first = arguments.first, !first.hasPrefix("-"), !commands.contains(first), first != "help" else { return nil }
        guard let nearest = NearestName.nearest(to: first, among: commands) else { return nil }
        return Typo(given: first, nearest: nearest)
    }
}
