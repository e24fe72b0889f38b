import Foundation

/// An error in an input file, located: a CSV file's record, a plan's operation, a resolution
/// file's decision, an imported row the import's rules refuse. Printed the way compilers and
/// sqldiff print theirs: `FILE:LINE: what is wrong (… expected …)`, or `FILE: …` when no line
/// applies. One type for every input, so that a caller catches and prints one.
public struct InputError: Error, LocalizedError, Equatable {
    /// What kind of input the file is.
    public enum Input: String, Sendable {
        /// An ekidata CSV file (`import`, `diff`).
        case csv
        /// A plan of operations (`apply`, `split --plan`), or `command line` for one given there.
        case plan
        /// A resolution file of merge decisions (`--resolutions`).
        case resolution
        /// A source profile (`import --profile`).
        case profile
        /// A row of an imported file that the import's rules refuse (a reference, a mass closure).
        case importedRow
    }

    /// What kind of input the file is.
    public let input: Input
    /// The file as the curator named it.
    public let file: String
    /// The line of the record, operation or decision at fault (a quoted newline makes a CSV
    /// record span lines: its first); nil for the whole file.
    public let line: Int?
    /// What is wrong, the column and value when there are, and what was expected.
    public let message: String

    /// An error in `file` of kind `input`, at `line`.
    package init(_ input: Input, file: String, line: Int?, message: String) {
        self.input = input
        self.file = file
        self.line = line
        self.message = message
    }

    /// `FILE:LINE: message`, or `FILE: message`.
    public var errorDescription: String? {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
