import Foundation

/// An error in an input file, printed the way compilers and sqldiff print theirs:
/// `FILE:LINE: what is wrong (… expected …)`, or `FILE: …` when no line applies.
public protocol LocatedProblem: Error, LocalizedError {
    var file: String { get }
    var line: Int? { get }
    var message: String { get }
}

extension LocatedProblem {
    public var errorDescription: String? {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
