import StationCurate
import StationImport
import StationVersion

/// What `import --json` and `revert --json` print on stdout when they refuse for decisions nobody
/// made (exit 1, the message on stderr as always): the conflicts and provisional rows, in the
/// shapes the change report gives them, so a script can fill a resolution file
/// (docs/schemas/undecided.schema.json).
struct UndecidedOutput: Encodable {
    let refused = "undecided"
    let version: Int?
    let conflicts: [MergeConflict]
    let provisionalAdoptions: [Adoption]

    enum CodingKeys: String, CodingKey {
        case refused, version, conflicts, provisionalAdoptions = "provisional_adoptions"
    }

    /// Every key present: `version` is null for an import.
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(refused, forKey: .refused)
        try container.encode(version, forKey: .version)
        try container.encode(conflicts, forKey: .conflicts)
        try container.encode(provisionalAdoptions, forKey: .provisionalAdoptions)
    }

    /// Prints `error`'s undecided items when it is such a refusal and JSON was asked; rethrows it.
    static func printing<T>(json: Bool, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            guard json else { throw error }
            if case let ImportError.undecided(conflicts, adoptions) = error {
                try Console.printJSON(UndecidedOutput(version: nil, conflicts: conflicts, provisionalAdoptions: adoptions))
            } else if case let RevertError.undecided(version, conflicts) = error {
                try Console.printJSON(UndecidedOutput(version: version, conflicts: conflicts, provisionalAdoptions: []))
            }
            throw error
        }
    }
}
