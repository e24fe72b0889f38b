import StationSchema
import StationSupport

/// One curated operation, as a plan line or a command states it.
///
/// Values are given as text (`"weight": "3"` or `3` in a plan) and read by the same rules
/// as CSV fields, so `"lat": "north"` fails exactly as it would in a stations file.
public enum PlanOperation: Sendable, Equatable {
    /// Add a row (refused if the key exists).
    case add(table: MasterTable, values: [String: String])
    /// Change some columns of an existing row.
    case edit(table: MasterTable, key: [String], values: [String: String])
    /// A whole line passes to another company; station codes stay.
    case transferLine(line: Int64, toCompany: Int64)
    /// A section passes to another line: these stations' `line_cd` becomes `toLine`, the
    /// connections between two of them move with them, and those to a station left behind go.
    case moveStations(stations: [Int64], toLine: Int64)
    /// Close (`e_status = 2`); a line or company with open rows on it needs `cascade`.
    case close(table: MasterTable, key: [String], date: String?, cascade: Bool)
    /// Bring back a closed row (`e_status = 0`).
    case restore(table: MasterTable, key: [String])
    /// Split a station: add `new` as a copy of `old` (on `line`, with `values` changed),
    /// connect it to `connectTo` on its line, and record `DUPLICATE old → new`.
    case split(old: Int64, new: Int64, line: Int64?, values: [String: String], connectTo: [Int64])
    /// Record `DUPLICATE old → new` for a station that already exists (an import added it):
    /// what `suggest` proposes for a station that closed while a new one opened.
    case recordSplit(old: Int64, new: Int64)
    /// Add connections along a chain of stations on a line: a–b, b–c, …
    case connect(line: Int64, stations: [Int64])
    /// Remove connections along a chain of stations on a line.
    case disconnect(line: Int64, stations: [Int64])
}

/// An operation with the place it came from, for errors.
public struct LocatedOperation: Sendable {
    /// The operation.
    public var operation: PlanOperation
    /// The plan file it came from, or `command line`.
    public var file: String
    /// Its line in the plan file; nil for a command.
    public var line: Int?

    /// An operation located in a plan (or on the command line), so that an error can name its line.
    public init(_ operation: PlanOperation, file: String = "command line", line: Int? = nil) {
        self.operation = operation
        self.file = file
        self.line = line
    }
}


import Foundation
