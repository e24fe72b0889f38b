import Foundation
import GRDB

/// Turns one CSV field into the value stored in the master database, per the diff rules:
/// trimmed of spaces and tabs; empty is NULL; `0000-00-00` is NULL; codes are integers;
/// coordinates are numbers in range.
///
/// For example, in a stations file `" 35.6355 "` in `lat` gives `35.6355`,
/// `0000-00-00` in `close_ymd` gives NULL and `ab` in `station_cd` throws
/// `stations.csv:42: station_cd "ab" is not an integer`.
struct FieldDecoder {
    let file: String

    func decode(_ bytes: ArraySlice<UInt8>, as column: MasterTable.Column, line: Int) throws -> DatabaseValue {
        let trimmed = Self.trim(bytes)
        if trimmed.isEmpty {
            if column.isRequired {
                throw CSVError(file: file, line: line, message: "\(column.name) is empty (expected \(Self.expectation(column.kind)))")
            }
            return .null
        }
        guard let text = String(validating: trimmed, as: UTF8.self) else {
            throw CSVError(
                file: file, line: line,
                message: "\(column.name) is not valid UTF-8 (the file may be Shift_JIS: convert it with `iconv -f SHIFT_JIS -t UTF-8 \(file) > converted.csv`)")
        }
        switch column.kind {
        case .text:
            return text.databaseValue
        case .integer:
            guard let value = Int64(text) else {
                throw CSVError(file: file, line: line, message: "\(column.name) \"\(text)\" is not an integer (expected \(Self.expectation(column.kind)))")
            }
            return value.databaseValue
        case .real:
            return try number(text, column, line).databaseValue
        case .coordinate(let range):
            let value = try number(text, column, line)
            guard range.contains(value) else {
                throw CSVError(
                    file: file, line: line,
                    message: "\(column.name) \(text) is out of range (expected degrees from \(range.lowerBound) to \(range.upperBound))")
            }
            return value.databaseValue
        case .date:
            if text == "0000-00-00" { return .null }
            guard Self.isValidDate(text) else {
                throw CSVError(file: file, line: line, message: "\(column.name) \"\(text)\" is not a valid date (expected YYYY-MM-DD, or 0000-00-00 for unknown)")
            }
            return text.databaseValue
        }
    }

    private func number(_ text: String, _ column: MasterTable.Column, _ line: Int) throws -> Double {
        let isPlainNumber = text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45 }
        guard isPlainNumber, let value = Double(text), value.isFinite else {
            throw CSVError(file: file, line: line, message: "\(column.name) \"\(text)\" is not a number (expected \(Self.expectation(column.kind)))")
        }
        return value
    }

    static func trim(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var result = bytes
        while let first = result.first, first == 0x20 || first == 0x09 { result = result.dropFirst() }
        while let last = result.last, last == 0x20 || last == 0x09 || last == 0x0D { result = result.dropLast() }
        return result
    }

    static func isValidDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              year >= 1, (1...12).contains(month), day >= 1
        else { return false }
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= days[month - 1]
    }

    static func expectation(_ kind: MasterTable.Kind) -> String {
        switch kind {
        case .integer: return "a whole number"
        case .real: return "a number"
        case .coordinate(let range): return "degrees from \(range.lowerBound) to \(range.upperBound)"
        case .text: return "text"
        case .date: return "a date YYYY-MM-DD"
        }
    }
}
