import Foundation
import GRDB

/// A curated change the rules refuse.
public enum CurationError: Error, LocalizedError, Equatable {
    case danglingReference(table: String, key: String, column: String, value: Int64, parent: String)

    public var errorDescription: String? {
        switch self {
        case let .danglingReference(table, key, column, value, parent):
            return "\(table) \(key): \(column) \(value) names no row of \(parent) (expected an existing \(column))"
        }
    }
}
